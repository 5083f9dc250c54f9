// splinetool's optional modules, loaded with dlopen() on first use so that the commands that need
// neither GL nor video (prefilter, sample, resample and compare on the CPU, info FILE) start
// without loading the GL layer, EGL and FFmpeg (docs/DESIGN.md, "splinetool's modules"):
//
//   splinetool-gl.so     the GL backend (backend_gl.cpp, the GL layer, glad): --backend gl, and
//                        the GL probe of `splinetool info`
//   splinetool-video.so  upscale-video (upscale_video.cpp, splineview_video: FFmpeg)
//   splinetool-dicom.so  the DICOM reader (sv::load_dicom, sv::looks_like_dicom: GDCM, whose
//                        libraries build their dictionaries in static constructors)
//
// splinetool looks for a module next to its own executable (/proc/self/exe: the build tree),
// then in <exe dir>/../lib/splineview/ (the installed layout, `cmake --install`). A module is a
// self-contained shared object (its static libraries linked in, their symbols hidden) exporting
// two C functions: splinetool_module_build_key() and its entry table. C++ objects (std::string,
// the Backend, sv::Error exceptions) cross the boundary, so a module from another build is
// refused by its key before any entry point is used.
//
// In splinetool itself, modules.cpp defines the functions that live in the modules
// (make_gl_backend, gl_status, run_upscale_video, sv::video::video_compiled, ffmpeg_versions,
// has_video_encoder, sv::load_dicom, sv::looks_like_dicom) as forwarders that load the module, so
// the commands and the core library's load_any call them unchanged.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend.h"
#include "commands.h"
#include "splineview/input.h"
#include "splineview/io.h"

namespace splinetool {

// The entry table of splinetool-gl.so.
struct GlModule {
  std::unique_ptr<Backend> (*make_backend)(const BackendOptions& opt);
  GlStatus (*status)();
  void (*share_context)(bool share);  // share_gl_context (backend_gl.h)
};

// The entry table of splinetool-video.so.
struct VideoModule {
  void (*run_upscale_video)(const UpscaleVideoArgs& args);
  bool (*has_video_encoder)(const std::string& name);
};

// The entry table of splinetool-dicom.so; `options` are the caller's sv::input_options().
struct DicomModule {
  sv::Loaded (*load_dicom)(const std::string& path, const sv::InputOptions& options);
  bool (*looks_like_dicom)(const std::string& path, const sv::InputOptions& options);
};

// What a module and splinetool must agree on: version, compiler, build type, sanitizers, CUDA,
// and the git commit of the sources (SPLINETOOL_BUILD_KEY + sv::git_commit()).
std::string module_build_key();

// The module's file name ("splinetool-gl.so") and the directories searched for it, in order.
std::vector<std::string> module_search_dirs();

// Loads the module (once per process; later calls return the same result): the entry table, or
// null with `why` set to one sentence (not found, with the places looked in; dlopen's error; not
// a splinetool module; from another build).
const GlModule* load_gl_module(std::string* why);
const VideoModule* load_video_module(std::string* why);
const DicomModule* load_dicom_module(std::string* why);

}  // namespace splinetool

// Exported by each module (C linkage, so dlsym finds them by these names).
extern "C" {
const char* splinetool_module_build_key();
const splinetool::GlModule* splinetool_gl_module();
const splinetool::VideoModule* splinetool_video_module();
const splinetool::DicomModule* splinetool_dicom_module();
}
