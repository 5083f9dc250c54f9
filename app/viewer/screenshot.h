// Screenshots of the viewer: reads back the default framebuffer (the whole window, panel
// included) and writes it as an RGB PNG, top row first.
#pragma once

#include <string>

namespace sv::viewer {

// Reads the back buffer of the default framebuffer (call after rendering, before swapping)
// and writes `path` (8-bit RGB PNG). Throws sv::Error naming the file when it cannot be
// written.
// `framebuffer` 0 reads the default framebuffer's back buffer, any other framebuffer object its
// colour attachment 0 (the headless viewer's surface).
void save_screenshot(const std::string& path, int width, int height, unsigned framebuffer = 0);

}  // namespace sv::viewer
