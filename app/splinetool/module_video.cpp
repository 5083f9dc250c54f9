// splinetool-video.so: upscale-video as a module (modules.h). upscale_video.cpp, splineview_video
// (FFmpeg) and the CUDA upscaler are linked in; only these C functions are exported.
#include "modules.h"
#include "splineview/video.h"

namespace {

bool has_encoder(const std::string& name) {
  return sv::video::has_video_encoder(name);
}

const splinetool::VideoModule kTable = {splinetool::run_upscale_video, has_encoder};

}  // namespace

extern "C" {

__attribute__((visibility("default"))) const char* splinetool_module_build_key() {
  static const std::string key = splinetool::module_build_key();
  return key.c_str();
}

__attribute__((visibility("default"))) const splinetool::VideoModule* splinetool_video_module() {
  return &kTable;
}

}  // extern "C"
