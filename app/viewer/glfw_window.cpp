// GLFW window and GL context of the viewer (see glfw_window.h).
#include "glfw_window.h"

#include <utility>

#include "splineview/error.h"
#include "splineview/gl/gl.h"

namespace sv::viewer {
namespace {

std::string glfw_error() {
  const char* description = nullptr;
  const int code = glfwGetError(&description);
  if (code == GLFW_NO_ERROR) return "no error reported by GLFW";
  return description ? description : "GLFW error " + std::to_string(code);
}

}  // namespace

GlfwWindow::GlfwWindow(int width, int height, const std::string& title) {
  if (!glfwInit()) throw Error("cannot initialise GLFW: " + glfw_error());
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 4);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 5);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  glfwWindowHint(GLFW_SRGB_CAPABLE, GLFW_FALSE);
  window_ = glfwCreateWindow(width, height, title.c_str(), nullptr, nullptr);
  if (!window_) {
    const std::string why = glfw_error();
    glfwTerminate();
    throw Error("cannot open a " + std::to_string(width) + "x" + std::to_string(height) +
                " window with an OpenGL 4.5 core context: " + why);
  }
  glfwMakeContextCurrent(window_);
  glfwSetWindowUserPointer(window_, this);
  glfwSetDropCallback(window_, &GlfwWindow::on_drop);
  try {
    gl::load_functions(glfwGetProcAddress);
  } catch (...) {
    glfwDestroyWindow(window_);
    glfwTerminate();
    throw;
  }
}

GlfwWindow::~GlfwWindow() {
  glfwDestroyWindow(window_);
  glfwTerminate();
}

std::vector<std::string> GlfwWindow::take_dropped_paths() {
  return std::exchange(dropped_, {});
}

void GlfwWindow::on_drop(GLFWwindow* window, int count, const char** paths) {
  auto* self = static_cast<GlfwWindow*>(glfwGetWindowUserPointer(window));
  if (!self) return;
  for (int i = 0; i < count; ++i) self->dropped_.emplace_back(paths[i]);
}

}  // namespace sv::viewer
