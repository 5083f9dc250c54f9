// The viewer's window: GLFW initialisation, a GL 4.5 core forward-compatible context with
// loaded GL functions, and the files dropped onto the window. One per process.
#pragma once

#include <string>
#include <vector>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

namespace sv::viewer {

class GlfwWindow {
 public:
  // Initialises GLFW, opens the window and makes its context current; throws sv::Error with
  // GLFW's own description when any step fails (no display, no GL 4.5, ...).
  GlfwWindow(int width, int height, const std::string& title);
  ~GlfwWindow();
  GlfwWindow(const GlfwWindow&) = delete;
  GlfwWindow& operator=(const GlfwWindow&) = delete;

  GLFWwindow* get() const { return window_; }
  bool should_close() const { return glfwWindowShouldClose(window_) != 0; }
  void framebuffer_size(int* width, int* height) const {
    glfwGetFramebufferSize(window_, width, height);
  }
  // Paths dropped since the last call.
  std::vector<std::string> take_dropped_paths();

 private:
  static void on_drop(GLFWwindow* window, int count, const char** paths);

  GLFWwindow* window_ = nullptr;
  std::vector<std::string> dropped_;
};

}  // namespace sv::viewer
