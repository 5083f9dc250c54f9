// Headless OpenGL 4.5 core context through EGL (see splineview/gl/headless.h).
//
// Order of attempts (SPLINEVIEW_EGL_PLATFORM=device|surfaceless restricts it to one platform):
//   1. EGL_EXT_platform_device, NVIDIA devices (device extension EGL_NV_device_cuda, or
//      "nvidia" in the vendor/renderer/DRM strings);
//   2. EGL_MESA_platform_surfaceless (Mesa: llvmpipe, or a GPU driver);
//   3. EGL_EXT_platform_device, the remaining devices (hardware before software).
// Each candidate runs display -> eglInitialize -> eglBindAPI(EGL_OPENGL_API) -> config ->
// 4.5 core context -> eglMakeCurrent without a surface -> GL function loading; the first one
// that gets through wins. When none does, the error lists every attempt and the failed step.
#include "splineview/gl/headless.h"

#include <glad/egl.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#include "splineview/error.h"
#include "splineview/gl/gl.h"

namespace sv::gl {
namespace {

std::string egl_error_name(EGLint e) {
  switch (e) {
    case EGL_SUCCESS:
      return "EGL_SUCCESS";
    case EGL_NOT_INITIALIZED:
      return "EGL_NOT_INITIALIZED";
    case EGL_BAD_ACCESS:
      return "EGL_BAD_ACCESS";
    case EGL_BAD_ALLOC:
      return "EGL_BAD_ALLOC";
    case EGL_BAD_ATTRIBUTE:
      return "EGL_BAD_ATTRIBUTE";
    case EGL_BAD_CONFIG:
      return "EGL_BAD_CONFIG";
    case EGL_BAD_CONTEXT:
      return "EGL_BAD_CONTEXT";
    case EGL_BAD_CURRENT_SURFACE:
      return "EGL_BAD_CURRENT_SURFACE";
    case EGL_BAD_DISPLAY:
      return "EGL_BAD_DISPLAY";
    case EGL_BAD_MATCH:
      return "EGL_BAD_MATCH";
    case EGL_BAD_NATIVE_PIXMAP:
      return "EGL_BAD_NATIVE_PIXMAP";
    case EGL_BAD_NATIVE_WINDOW:
      return "EGL_BAD_NATIVE_WINDOW";
    case EGL_BAD_PARAMETER:
      return "EGL_BAD_PARAMETER";
    case EGL_BAD_SURFACE:
      return "EGL_BAD_SURFACE";
    case EGL_CONTEXT_LOST:
      return "EGL_CONTEXT_LOST";
    default: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "EGL error 0x%04X", static_cast<unsigned>(e));
      return buf;
    }
  }
}

bool has_extension(const char* list, const std::string& name) {
  if (!list) return false;
  const std::string s = std::string(" ") + list + " ";
  return s.find(" " + name + " ") != std::string::npos;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  });
  return s;
}

// Entry points looked up directly, so that they work before any display is initialised
// (glad's flags for them depend on the display it inspected).
template <class F>
F egl_proc(const char* name) {
  return reinterpret_cast<F>(eglGetProcAddress(name));
}

GLADapiproc gl_proc(const char* name) {
  return reinterpret_cast<GLADapiproc>(eglGetProcAddress(name));
}

// eglInitialize/eglTerminate are per display, and a platform display is one object per
// process: count the users so that one context's end does not terminate another's display.
std::mutex g_display_mutex;
std::map<EGLDisplay, int> g_display_users;

bool acquire_display(EGLDisplay dpy) {
  std::lock_guard<std::mutex> lock(g_display_mutex);
  int& users = g_display_users[dpy];
  if (users == 0) {
    EGLint major = 0, minor = 0;
    if (eglInitialize(dpy, &major, &minor) != EGL_TRUE) {
      g_display_users.erase(dpy);
      return false;
    }
  }
  ++users;
  return true;
}

void release_display(EGLDisplay dpy) {
  std::lock_guard<std::mutex> lock(g_display_mutex);
  auto it = g_display_users.find(dpy);
  if (it == g_display_users.end()) return;
  if (--it->second == 0) {
    eglTerminate(dpy);
    g_display_users.erase(it);
  }
}

struct Candidate {
  std::string platform;  // "device" or "surfaceless"
  EGLenum egl_platform = 0;
  void* native = nullptr;  // EGLDeviceEXT for "device"
  std::string label;       // for messages
};

// Thrown inside one attempt; the caller collects it and tries the next candidate.
struct StepFailed {
  std::string message;
};

[[noreturn]] void fail(const std::string& step) {
  throw StepFailed{step + " failed (" + egl_error_name(eglGetError()) + ")"};
}

}  // namespace

struct HeadlessContext::Impl {
  EGLDisplay display = EGL_NO_DISPLAY;
  EGLContext context = EGL_NO_CONTEXT;
  std::string platform;
  std::string description;

  ~Impl() {
    if (context != EGL_NO_CONTEXT) {
      if (eglGetCurrentContext() == context)
        eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
      eglDestroyContext(display, context);
    }
    if (display != EGL_NO_DISPLAY) release_display(display);
  }

  // Runs all steps on one candidate; throws StepFailed naming the step that failed.
  void open(const Candidate& c) {
    auto get_platform_display =
        egl_proc<PFNEGLGETPLATFORMDISPLAYEXTPROC>("eglGetPlatformDisplayEXT");
    if (!get_platform_display) throw StepFailed{"eglGetPlatformDisplayEXT is missing"};
    EGLDisplay dpy = get_platform_display(c.egl_platform, c.native, nullptr);
    if (dpy == EGL_NO_DISPLAY) fail("eglGetPlatformDisplayEXT");
    if (!acquire_display(dpy)) fail("eglInitialize");
    display = dpy;
    // Now that a display is initialised, glad can see its version and extensions.
    if (gladLoaderLoadEGL(display) == 0) throw StepFailed{"gladLoaderLoadEGL(display) failed"};
    const char* extensions = eglQueryString(display, EGL_EXTENSIONS);
    EGLint major = 0, minor = 0;
    eglInitialize(display, &major, &minor);  // already initialised: only reads the version
    const bool egl15 = major > 1 || (major == 1 && minor >= 5);
    if (!egl15 && !has_extension(extensions, "EGL_KHR_create_context"))
      throw StepFailed{"the display has neither EGL 1.5 nor EGL_KHR_create_context"};
    if (!has_extension(extensions, "EGL_KHR_surfaceless_context"))
      throw StepFailed{"the display lacks EGL_KHR_surfaceless_context"};
    if (eglBindAPI(EGL_OPENGL_API) != EGL_TRUE) fail("eglBindAPI(EGL_OPENGL_API)");

    EGLConfig config = EGL_NO_CONFIG_KHR;
    if (!has_extension(extensions, "EGL_KHR_no_config_context")) {
      const EGLint config_attribs[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_SURFACE_TYPE, 0,
                                       EGL_NONE};
      EGLint count = 0;
      if (eglChooseConfig(display, config_attribs, &config, 1, &count) != EGL_TRUE)
        fail("eglChooseConfig");
      if (count < 1) throw StepFailed{"eglChooseConfig found no config with EGL_OPENGL_BIT"};
    }
    const EGLint context_attribs[] = {EGL_CONTEXT_MAJOR_VERSION,
                                      4,
                                      EGL_CONTEXT_MINOR_VERSION,
                                      5,
                                      EGL_CONTEXT_OPENGL_PROFILE_MASK,
                                      EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                                      EGL_NONE};
    context = eglCreateContext(display, config, EGL_NO_CONTEXT, context_attribs);
    if (context == EGL_NO_CONTEXT) fail("eglCreateContext (OpenGL 4.5 core)");
    if (eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context) != EGL_TRUE)
      fail("eglMakeCurrent without a surface");
    try {
      load_functions(gl_proc);
    } catch (const Error& e) {
      throw StepFailed{std::string("loading GL: ") + e.what()};
    }
    const GLubyte* renderer = glGetString(GL_RENDERER);
    const GLubyte* version = glGetString(GL_VERSION);
    description = std::string(renderer ? reinterpret_cast<const char*>(renderer) : "?") + ", " +
                  (version ? reinterpret_cast<const char*>(version) : "?");
    platform = c.platform;
  }

  // Undoes a failed attempt so that the next one starts clean.
  void close() {
    if (context != EGL_NO_CONTEXT) {
      if (eglGetCurrentContext() == context)
        eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
      eglDestroyContext(display, context);
      context = EGL_NO_CONTEXT;
    }
    if (display != EGL_NO_DISPLAY) {
      release_display(display);
      display = EGL_NO_DISPLAY;
    }
  }
};

HeadlessContext::HeadlessContext() : impl_(std::make_unique<Impl>()) {
  if (gladLoaderLoadEGL(EGL_NO_DISPLAY) == 0)
    throw Error(
        "headless GL: loading libEGL failed (gladLoaderLoadEGL); install libegl1 and a driver "
        "(libegl-mesa0 for Mesa, the NVIDIA driver's EGL library for NVIDIA)");

  std::string forced;
  if (const char* env = std::getenv("SPLINEVIEW_EGL_PLATFORM")) forced = env;
  if (!forced.empty() && forced != "device" && forced != "surfaceless")
    throw Error("SPLINEVIEW_EGL_PLATFORM must be \"device\" or \"surfaceless\", got \"" + forced +
                "\"");
  const bool want_device = forced.empty() || forced == "device";
  const bool want_surfaceless = forced.empty() || forced == "surfaceless";

  const char* client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
  std::vector<std::string> problems;

  // Devices of EGL_EXT_platform_device, NVIDIA first, then hardware, then software.
  std::vector<Candidate> nvidia, other_devices;
  if (want_device) {
    const bool platform_device = has_extension(client, "EGL_EXT_platform_device") &&
                                 has_extension(client, "EGL_EXT_platform_base");
    auto query_devices = egl_proc<PFNEGLQUERYDEVICESEXTPROC>("eglQueryDevicesEXT");
    auto query_string = egl_proc<PFNEGLQUERYDEVICESTRINGEXTPROC>("eglQueryDeviceStringEXT");
    if (!platform_device || !query_devices || !query_string) {
      problems.push_back("device platform: EGL_EXT_platform_device or eglQueryDevicesEXT missing");
    } else {
      EGLDeviceEXT devices[16];
      EGLint count = 0;
      if (query_devices(16, devices, &count) != EGL_TRUE || count == 0) {
        problems.push_back("device platform: eglQueryDevicesEXT found no device (" +
                           egl_error_name(eglGetError()) + ")");
        count = 0;
      }
      std::vector<Candidate> software;
      for (EGLint i = 0; i < count; ++i) {
        auto str = [&](EGLint name) -> std::string {
          const char* s = query_string(devices[i], name);
          eglGetError();  // an unsupported name only sets an error
          return s ? s : "";
        };
        const std::string ext = str(EGL_EXTENSIONS);
        const std::string drm = str(EGL_DRM_DEVICE_FILE_EXT);
        std::string name = has_extension(ext.c_str(), "EGL_EXT_device_query_name")
                               ? str(EGL_VENDOR) + " " + str(EGL_RENDERER_EXT)
                               : "";
        Candidate c{"device", EGL_PLATFORM_DEVICE_EXT, devices[i],
                    "device " + std::to_string(i) + " (" +
                        (drm.empty() ? std::string("no DRM file") : drm) +
                        (name.empty() ? "" : ", " + name) + ")"};
        const bool is_nvidia = has_extension(ext.c_str(), "EGL_NV_device_cuda") ||
                               lower(name + " " + drm).find("nvidia") != std::string::npos;
        if (is_nvidia) {
          nvidia.push_back(c);
        } else if (has_extension(ext.c_str(), "EGL_MESA_device_software") || drm.empty()) {
          software.push_back(c);
        } else {
          other_devices.push_back(c);
        }
      }
      other_devices.insert(other_devices.end(), software.begin(), software.end());
    }
  }

  std::vector<Candidate> candidates = nvidia;
  if (want_surfaceless) {
    if (has_extension(client, "EGL_MESA_platform_surfaceless")) {
      candidates.push_back({"surfaceless", EGL_PLATFORM_SURFACELESS_MESA, nullptr, "surfaceless"});
    } else {
      problems.push_back("surfaceless platform: EGL_MESA_platform_surfaceless missing");
    }
  }
  candidates.insert(candidates.end(), other_devices.begin(), other_devices.end());

  for (const Candidate& c : candidates) {
    try {
      impl_->open(c);
      return;
    } catch (const StepFailed& f) {
      problems.push_back(c.label + ": " + f.message);
      impl_->close();
    }
  }
  std::string message = "headless GL: no OpenGL 4.5 core context through EGL";
  if (!forced.empty()) message += " (SPLINEVIEW_EGL_PLATFORM=" + forced + ")";
  for (const std::string& p : problems) message += "; " + p;
  throw Error(message);
}

HeadlessContext::~HeadlessContext() = default;

std::string HeadlessContext::description() const {
  return impl_->description;
}

const std::string& HeadlessContext::platform() const {
  return impl_->platform;
}

}  // namespace sv::gl
