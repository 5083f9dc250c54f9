// Loading splinetool's modules (modules.h) and, in splinetool itself, the functions that live in
// them as forwarders: the GL backend (make_gl_backend, gl_status), video (run_upscale_video,
// sv::video::video_compiled, ffmpeg_versions, has_video_encoder) and DICOM (sv::load_dicom,
// sv::looks_like_dicom). The commands and the core library call these as if the code were linked
// in; the module is loaded on the first call that needs it. Defining the two DICOM functions here
// keeps the linker from taking io_dicom.o (and isolate.o) out of splineview_core, and
// --as-needed then drops GDCM's libraries from splinetool (CMakeLists.txt).
#include "modules.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "splineview/error.h"
#include "splineview/video.h"

#include "backend_gl.h"

namespace splinetool {
namespace {

// The directory of this executable (/proc/self/exe, symbolic links resolved by the kernel), or ""
// with `why` set.
std::string exe_dir(std::string* why) {
  std::vector<char> buf(4096);
  for (;;) {
    const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size());
    if (n < 0) {
      *why = std::string("cannot find splinetool's own path (/proc/self/exe: ") +
             std::strerror(errno) + ")";
      return {};
    }
    if (static_cast<std::size_t>(n) < buf.size()) {
      std::string path(buf.data(), static_cast<std::size_t>(n));
      const std::size_t slash = path.rfind('/');
      if (slash == std::string::npos) return ".";
      return slash == 0 ? std::string("/") : path.substr(0, slash);
    }
    buf.resize(buf.size() * 2);
  }
}

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Opens `file` from the first directory of module_search_dirs() that holds it, checks its build
// key and returns the address of `entry` (null with `why` set).
void* open_module(const char* file, const char* entry, std::string* why) {
  const std::vector<std::string> dirs = module_search_dirs();
  if (dirs.empty()) {
    exe_dir(why);
    return nullptr;
  }
  std::string path;
  for (const std::string& d : dirs)
    if (is_file(d + "/" + file)) {
      path = d + "/" + file;
      break;
    }
  if (path.empty()) {
    *why = "not found next to splinetool (" + dirs[0] + ") nor in " + dirs[1];
    return nullptr;
  }
  // RTLD_NOW: every symbol resolved here, so a broken module fails now, with dlopen's message,
  // never later in the middle of a command. Never closed: its objects live until exit.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = ::dlerror();
    *why = e ? e : ("dlopen failed for " + path);
    return nullptr;
  }
  using KeyFn = const char* (*)();
  const auto key_fn = reinterpret_cast<KeyFn>(::dlsym(handle, "splinetool_module_build_key"));
  void* table = ::dlsym(handle, entry);
  if (!key_fn || !table) {
    *why = path + " is not a splinetool module (it lacks " +
           (key_fn ? std::string(entry) : std::string("splinetool_module_build_key")) + ")";
    return nullptr;
  }
  const std::string key = key_fn();
  if (key != module_build_key()) {
    *why = path + " is from another build (" + key + "; this splinetool: " + module_build_key() +
           "); build or install splinetool and its modules together";
    return nullptr;
  }
  return table;
}

template <typename Table>
struct Loaded {
  const Table* table = nullptr;
  std::string why;
};

template <typename Table>
Loaded<Table> load(const char* file, const char* entry) {
  Loaded<Table> l;
  using EntryFn = const Table* (*)();
  if (void* f = open_module(file, entry, &l.why)) {
    l.table = reinterpret_cast<EntryFn>(f)();
    if (!l.table) l.why = std::string(file) + " returned no entry table";
  }
  return l;
}

}  // namespace

std::vector<std::string> module_search_dirs() {
  std::string why;
  const std::string dir = exe_dir(&why);
  if (dir.empty()) return {};
  const std::size_t slash = dir.rfind('/');
  const std::string parent = slash == std::string::npos ? dir + "/.." : dir.substr(0, slash);
  return {dir, parent + "/lib/splineview"};
}

const GlModule* load_gl_module(std::string* why) {
  static const Loaded<GlModule> l = load<GlModule>("splinetool-gl.so", "splinetool_gl_module");
  if (why) *why = l.why;
  return l.table;
}

const DicomModule* load_dicom_module(std::string* why) {
  static const Loaded<DicomModule> l =
      load<DicomModule>("splinetool-dicom.so", "splinetool_dicom_module");
  if (why) *why = l.why;
  return l.table;
}

const VideoModule* load_video_module(std::string* why) {
  static const Loaded<VideoModule> l =
      load<VideoModule>("splinetool-video.so", "splinetool_video_module");
  if (why) *why = l.why;
  return l.table;
}

// ---- forwarders: the GL backend ----------------------------------------------------------------
namespace {
bool g_share_gl = false;       // asked for (a batch runs)
bool g_module_shares = false;  // told to the module, which is loaded only when a command needs it
}  // namespace

#ifdef SPLINEVIEW_HAVE_GL
std::unique_ptr<Backend> make_gl_backend(const BackendOptions& opt) {
  std::string why;
  const GlModule* m = load_gl_module(&why);
  if (!m) throw sv::Error("--backend gl needs splinetool-gl.so: " + why);
  if (g_share_gl != g_module_shares) {
    m->share_context(g_share_gl);
    g_module_shares = g_share_gl;
  }
  return m->make_backend(opt);
}
#endif

void share_gl_context(bool share) {
  g_share_gl = share;
#ifdef SPLINEVIEW_HAVE_GL
  if (!share && g_module_shares) {
    if (const GlModule* m = load_gl_module(nullptr)) m->share_context(false);
    g_module_shares = false;
  }
#endif
}

#ifdef SPLINEVIEW_HAVE_GL

GlStatus gl_status() {
  std::string why;
  const GlModule* m = load_gl_module(&why);
  if (m) return m->status();
  GlStatus s;
  s.compiled = true;
  s.reason = "the GL backend needs splinetool-gl.so: " + why;
  return s;
}
#endif

// ---- forwarders: video (upscale-video) ---------------------------------------------------------
void run_upscale_video(const UpscaleVideoArgs& args) {
  std::string why;
  const VideoModule* m = load_video_module(&why);
  if (!m) throw sv::Error("upscale-video needs splinetool-video.so: " + why);
  m->run_upscale_video(args);
}

}  // namespace splinetool

// ---- forwarders: DICOM (the core's load_any and folder loading call these) ---------------------
namespace sv {

Loaded load_dicom(const std::string& path) {
  std::string why;
  const splinetool::DicomModule* m = splinetool::load_dicom_module(&why);
  if (!m) throw Error("reading '" + path + "' (DICOM) needs splinetool-dicom.so: " + why);
  return m->load_dicom(path, input_options());
}

// Asked of inputs whose extension names no format (DICOM files often have none): without the
// module nothing is DICOM, and such a file goes on to the other loaders' errors as before.
bool looks_like_dicom(const std::string& path) {
  const splinetool::DicomModule* m = splinetool::load_dicom_module(nullptr);
  return m && m->looks_like_dicom(path, input_options());
}

}  // namespace sv

namespace sv::video {

// What the build linked the video module against, known without loading it (so --version stays
// fast); SPLINETOOL_FFMPEG_VERSIONS is pkg-config's view at configure time, which is what the
// module was built and linked against.
bool video_compiled() {
#ifdef SPLINETOOL_FFMPEG_VERSIONS
  return true;
#else
  return false;
#endif
}

std::string ffmpeg_versions() {
#ifdef SPLINETOOL_FFMPEG_VERSIONS
  return SPLINETOOL_FFMPEG_VERSIONS;
#else
  return "none (built without FFmpeg)";
#endif
}

// Asked while the command line is parsed (--codec): loads the module. Without it, the answer is
// left to upscale-video itself, which then reports the missing module.
bool has_video_encoder(const std::string& name) {
  const splinetool::VideoModule* m = splinetool::load_video_module(nullptr);
  return !m || m->has_video_encoder(name);
}

}  // namespace sv::video
