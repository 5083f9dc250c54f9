// The deform mode (issue 16 part 5): a 2-D image, or slices of a volume, warped by a cubic
// B-spline FFD field (a bundled synthetic field, a .npy control grid given with --grid, or, in
// 2-D, control points dragged with the mouse), shown once per field kernel side by side
// (texture hardware, per-voxel precise, thread per tile: deform_field.h), each view with the
// deformed control grid drawn over the image, det J as an overlay (folding in red) and the
// accuracy heat map |u_kernel - u_reference| against the CPU double reference
// (sv::ffd_field<double>), with max and mean figures over the views and in --report.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "deform_field.h"
#include "method_pass.h"
#include "mode.h"
#include "splineview/gl/program.h"

namespace sv::viewer {

struct DeformOptions {
  std::string path;  // image or volume; empty: the bundled ascent.png
  FfdPreset preset = FfdPreset::Swirl;
  std::optional<double> amplitude;  // empty: the preset's default
  std::string spacing;              // "N", "NxN", "NxNxN"; empty: 32 (2-D) or 12 (3-D)
  std::string grid;                 // a .npy control grid instead of the preset (needs spacing)
  std::array<bool, 3> kernels = {true, true, true};  // views, kFfdGlKernels order
  bool grid_lines = true;
  bool detj = true;
  bool heat_map = false;
  bool accuracy = true;        // measure the fields against the double reference
  double heat_top = 1e-2;      // voxels at the heat map's top colour
  std::optional<int> slice;    // 3-D: the axial slice shown; empty: the middle one
  std::optional<double> zoom;  // window pixels per voxel; empty: fit
  bool strict = false;         // a file that fails to load is final (screenshot runs)
};

class DeformMode final : public Mode {
 public:
  explicit DeformMode(const DeformOptions& options);
  ~DeformMode() override;

  const char* name() const override { return "deform"; }
  bool open(const std::string& path) override;
  std::vector<std::string> bundled() const override;
  bool open_bundled(std::size_t index) override;
  std::string title() const override;

  void update(const FrameInfo& f) override;
  void panel(const FrameInfo& f) override;
  void overlays(const FrameInfo& f, ImDrawList* list) override;
  void draw(const FrameInfo& f) override;

  std::optional<Progress> progress() const override { return std::nullopt; }
  bool settled() const override;
  void finish() override {}
  const std::string& error() const override { return error_; }
  void clear_error() override { error_.clear(); }
  std::vector<PassTiming> timings() const override;
  nlohmann::json report() const override;

 private:
  struct Document {
    std::string path, label, description;
    std::vector<std::size_t> shape;  // (y, x) or (z, y, x)
    std::size_t channels = 1;
    ArrayD values;        // normalised to [0, 1] (display)
    ArrayF coefficients;  // cubic B-spline, reflect boundary
    std::unique_ptr<FfdGlEngine> engine;
  };
  struct KernelResult {
    FfdGlTiming timing;
    std::optional<FieldError> error;  // against the reference (accuracy on)
    DetJStats detj;
    gl::Texture error_texture;  // R32F heat map values
  };

  bool load(const std::string& path);
  void reset_grid();
  void recompute(bool with_accuracy);
  std::vector<std::size_t> enabled() const;
  std::vector<Rect> cells(const FrameInfo& f) const;
  void handle_input(const FrameInfo& f, const std::vector<Rect>& cells);
  glm::dvec2 handle_position(std::size_t j, std::size_t i) const;  // 2-D, image (x, y)
  int slice() const;

  DeformOptions options_;
  std::optional<Document> doc_;
  std::string error_;
  std::string grid_source_;  // "preset swirl", "file grid.npy", "edited"
  ArrayD grid_;
  std::vector<int> delta_;
  int spacing_ui_ = 32;
  float amplitude_ = 0.5f;
  int preset_ui_ = 0;
  bool dirty_ = true;
  bool accuracy_stale_ = true;
  ArrayD reference_;  // the double field
  DetJStats reference_detj_;
  double reference_ms_ = 0;
  std::array<KernelResult, 3> results_;
  bool show_handles_ = true;
  int slice_ = 0;
  float heat_top_ = 1e-2f;
  float opacity_ = 0.6f;

  ViewTransform view_;
  bool view_pending_ = true;
  bool dragging_ = false;
  std::optional<std::array<std::size_t, 2>> drag_point_;  // control point (row, column) held
  std::optional<std::array<std::size_t, 2>> hover_point_;
  std::vector<Rect> last_cells_;

  gl::Program view_program_;
  gl::VertexArray vao_;
  std::array<FrameHistory<kHistoryLength>, 3> field_ms_;
  std::array<std::string, 3> pass_names_;
};

}  // namespace sv::viewer
