// splineview: the interactive viewer. Parses the command line and runs the viewer; every
// error that escapes ends here as one line on stderr and a non-zero exit code.
#include <cstdio>
#include <exception>
#include <string>

#include <CLI/CLI.hpp>

#include "splineview/error.h"
#include "viewer.h"

namespace {

// Parses "WxH" (e.g. "1280x800").
bool parse_size(const std::string& text, int* width, int* height) {
  int w = 0, h = 0;
  char x = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c", &w, &x, &h, &extra) != 3) return false;
  if ((x != 'x' && x != 'X') || w < 64 || h < 64 || w > 16384 || h > 16384) return false;
  *width = w;
  *height = h;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    sv::viewer::ViewerOptions options;
    std::string method = sv::gl::cli_name(options.method);
    std::string size = std::to_string(options.width) + "x" + std::to_string(options.height);
    double zoom = 0;
    std::string center;

    CLI::App app{
        "splineview: shows an image reconstructed with nearest, linear, unfiltered cubic "
        "B-spline or prefiltered (exact, interpolating) cubic B-spline interpolation on the GPU."};
    app.add_option("image", options.image,
                   "PNG or JPEG file to show (default: the bundled assets/coffee.png)");
    app.add_option("--method", method, "nearest | linear | cubic-unfiltered | cubic")
        ->check(CLI::IsMember({"nearest", "linear", "cubic-unfiltered", "cubic"}))
        ->capture_default_str();
    app.add_option("--zoom", zoom, "window pixels per image sample (default: fit the window)")
        ->check(CLI::Range(1.0 / 64, 1024.0));
    app.add_option("--center", center,
                   "image position X,Y (in samples, 0,0 = centre of the top-left sample) to "
                   "show at the centre of the view (default: the image centre)");
    app.add_option("--screenshot", options.screenshot,
                   "render, write the whole window to this PNG and exit (a file that fails "
                   "to load is then an error, not a fallback to the default image)");
    app.add_option("--size", size, "window size WxH")->capture_default_str();
    app.add_option("--frames", options.screenshot_frames,
                   "with --screenshot: frames to render before taking it (at least 3)")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str();
    CLI11_PARSE(app, argc, argv);

    options.method = sv::gl::parse_fetch_method(method);
    if (zoom > 0) options.zoom = zoom;
    if (!center.empty()) {
      double x = 0, y = 0;
      char extra = 0;
      if (std::sscanf(center.c_str(), "%lf,%lf%c", &x, &y, &extra) != 2) {
        std::fprintf(stderr, "splineview: error: --center must be X,Y, got %s\n", center.c_str());
        return 2;
      }
      options.center = glm::dvec2(x, y);
    }
    if (!parse_size(size, &options.width, &options.height)) {
      std::fprintf(stderr, "splineview: error: --size must be WxH with 64..16384 each, got %s\n",
                   size.c_str());
      return 2;
    }
    return sv::viewer::run_viewer(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "splineview: error: %s\n", e.what());
    return 1;
  } catch (...) {
    std::fprintf(stderr, "splineview: error: unknown exception\n");
    return 1;
  }
}
