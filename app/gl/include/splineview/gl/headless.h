// A headless OpenGL 4.5 core context through EGL, without any window system: Mesa (llvmpipe)
// through EGL_MESA_platform_surfaceless, NVIDIA through the EGL device platform
// (EGL_EXT_platform_device). Used by splinetool --backend gl, the GL tests and benchmarks.
#pragma once

#include <memory>
#include <string>

namespace sv::gl {

class HeadlessContext {
 public:
  // Creates the context and makes it current on this thread; loads GL with glad.
  // Throws sv::Error saying which step failed (no EGL, no platform, no GL 4.5 core, ...).
  HeadlessContext();
  ~HeadlessContext();
  HeadlessContext(const HeadlessContext&) = delete;
  HeadlessContext& operator=(const HeadlessContext&) = delete;

  // "NVIDIA H100 80GB HBM3/PCIe/SSE2, 4.6.0 NVIDIA 580.xx" or "llvmpipe (LLVM 15...), 4.5 (Core
  // Profile) Mesa 22.3.6": GL_RENDERER and GL_VERSION.
  std::string description() const;
  // "surfaceless" or "device".
  const std::string& platform() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sv::gl
