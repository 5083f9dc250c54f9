// Checks viewer screenshots against what the view transform and the CPU reference say they
// must show (tests/viewer/CMakeLists.txt runs the viewer under Xvfb and then this program).
// Two forms:
//  - IMAGE NEAREST.png CUBIC.png ...: two single-view screenshots of the same image and view,
//    one nearest and one prefiltered cubic;
//  - --layout LAYOUT METHODS IMAGE SHOT.png ...: one screenshot of a pair, a 2x2 grid or a
//    wipe (app/viewer/layout.h places the views; one view transform in cell coordinates).
// Properties checked, each printed with its numbers:
//  - the screenshots have the requested window size and every view is not blank;
//  - nearest shows exactly the image's samples at the places the view transform puts them
//    (not flipped, mirrored, shifted or stretched);
//  - the prefiltered cubic flavours (otf, precise; lut with its table's error) match the
//    double-precision CPU reference (prefilter + cubic B-spline sampler) at the same positions,
//    to within 8-bit display precision;
//  - precise and otf differ by at most what 8-bit hardware filter weights allow;
//  - cubic and nearest differ substantially, and cubic is smoother: far less gradient energy,
//    and no constant runs of `zoom` pixels as nearest has;
//  - a wipe shows its two methods on the two sides of the divider.
// All image statistics use only the pixels that show the image, below the band where the
// viewer draws its view labels and away from the wipe divider. When the image edges are in
// view (a small image, or X,Y near a corner), the reference check also covers the outer
// half-sample border, where the texture addressing (mirrored repeat) must agree with the
// reflect boundary of the prefilter and the reference; --make-noise writes a random image on
// which a mismatch there (e.g. clamp-to-edge) shows up clearly.
// Exit code 0 when all hold, 1 otherwise.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <stb_image.h>
#include <stb_image_write.h>
#include <glm/glm.hpp>

#include "layout.h"
#include "splineview/io.h"
#include "splineview/prefilter.h"
#include "splineview/sampler.h"
#include "view_transform.h"

namespace {

struct Rgb {
  int width = 0, height = 0;
  std::vector<unsigned char> data;
  int at(int x, int y, int c) const {
    return data[(static_cast<std::size_t>(y) * width + x) * 3 + c];
  }
};

Rgb load_png(const std::string& path) {
  Rgb img;
  int channels = 0;
  unsigned char* p = stbi_load(path.c_str(), &img.width, &img.height, &channels, 3);
  if (!p) {
    std::fprintf(stderr, "FAIL: cannot read %s: %s\n", path.c_str(), stbi_failure_reason());
    std::exit(1);
  }
  img.data.assign(p, p + static_cast<std::size_t>(img.width) * img.height * 3);
  stbi_image_free(p);
  return img;
}

int failures = 0;

void check(bool ok, const char* what, const std::string& numbers) {
  std::printf("%s: %s (%s)\n", ok ? "ok  " : "FAIL", what, numbers.c_str());
  if (!ok) ++failures;
}

std::string fmt(const char* format, double a, double b = 0, double c = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, a, b, c);
  return buf;
}

// The region of the window right of the panel, where the image is drawn.
struct Region {
  int x0, x1, y0, y1;
};

// Which pixels of the region show the image (rather than the background).
struct Mask {
  Region region;
  std::vector<bool> inside;  // row-major over the region
  bool at(int x, int y) const {
    if (x < region.x0 || y < region.y0 || x >= region.x1 || y >= region.y1) return false;
    return inside[static_cast<std::size_t>(y - region.y0) * (region.x1 - region.x0) +
                  (x - region.x0)];
  }
};

// Over the pixels of the mask.
double luminance_stddev(const Rgb& img, const Mask& mask) {
  double sum = 0, sum2 = 0, n = 0;
  const Region& r = mask.region;
  for (int y = r.y0; y < r.y1; ++y)
    for (int x = r.x0; x < r.x1; ++x) {
      if (!mask.at(x, y)) continue;
      const double l = 0.299 * img.at(x, y, 0) + 0.587 * img.at(x, y, 1) + 0.114 * img.at(x, y, 2);
      sum += l;
      sum2 += l * l;
      n += 1;
    }
  if (n == 0) return 0;
  return std::sqrt(std::max(0.0, sum2 / n - (sum / n) * (sum / n)));
}

std::size_t distinct_colours(const Rgb& img, const Mask& mask) {
  std::set<int> colours;
  const Region& r = mask.region;
  for (int y = r.y0; y < r.y1; ++y)
    for (int x = r.x0; x < r.x1; ++x)
      if (mask.at(x, y))
        colours.insert((img.at(x, y, 0) << 16) | (img.at(x, y, 1) << 8) | img.at(x, y, 2));
  return colours.size();
}

struct Gradient {
  double energy = 0;         // mean squared horizontal difference
  double zero_fraction = 0;  // fraction of horizontal neighbours with equal colour
};

// Over horizontal neighbours that both show the image.
Gradient horizontal_gradient(const Rgb& img, const Mask& mask) {
  Gradient g;
  double n = 0, zeros = 0;
  const Region& r = mask.region;
  for (int y = r.y0; y < r.y1; ++y)
    for (int x = r.x0; x + 1 < r.x1; ++x) {
      if (!mask.at(x, y) || !mask.at(x + 1, y)) continue;
      bool equal = true;
      for (int c = 0; c < 3; ++c) {
        const double d = img.at(x + 1, y, c) - img.at(x, y, c);
        g.energy += d * d;
        equal = equal && d == 0;
      }
      zeros += equal;
      n += 1;
    }
  g.energy /= n;
  g.zero_fraction = zeros / n;
  return g;
}

int to_byte(double v) {
  return static_cast<int>(std::lround(std::clamp(v, 0.0, 1.0) * 255.0));
}

// Writes a grey PNG of uniform random noise: the hardest case for the border, since adjacent
// coefficients differ by up to about twice the sample range.
int make_noise(const char* path, int w, int h) {
  const unsigned seed = std::random_device{}();
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> u(0, 255);
  std::vector<unsigned char> pixels(static_cast<std::size_t>(w) * static_cast<std::size_t>(h));
  for (unsigned char& p : pixels) p = static_cast<unsigned char>(u(rng));
  if (!stbi_write_png(path, w, h, 1, pixels.data(), w)) {
    std::fprintf(stderr, "FAIL: cannot write %s\n", path);
    return 1;
  }
  std::printf("wrote %s: %dx%d grey noise, seed %u\n", path, w, h, seed);
  return 0;
}

// The viewer draws its view labels in a band at the top of each view (app/viewer/viewer.cpp,
// about 24 px at UI scale 1), and the wipe divider and its handle within a few pixels of it.
constexpr int kLabelBand = 36;
constexpr int kDividerMargin = 10;
constexpr int kMargin = 4;

// The image and its double-precision coefficients.
struct Source {
  sv::ArrayD samples;
  sv::ArrayD coefficients;
  std::size_t channels = 1;
  int width = 0, height = 0;
};

// One view of a screenshot: the pixels checked, the image positions of their centres and which
// of them show the image.
struct View {
  std::string name;
  Region region;
  Mask mask;
  std::vector<double> positions;  // (y, x) per pixel of the region, row-major
  double inside = 0;

  int rw() const { return region.x1 - region.x0; }
  int px(std::size_t i) const { return region.x0 + static_cast<int>(i % rw()); }
  int py(std::size_t i) const { return region.y0 + static_cast<int>(i / rw()); }
  std::size_t size() const { return positions.size() / 2; }
};

// `view` maps window pixels to image positions.
View make_view(const std::string& name, const Region& region, const sv::viewer::ViewTransform& view,
               const Source& src) {
  View v;
  v.name = name;
  v.region = region;
  v.mask.region = region;
  for (int y = region.y0; y < region.y1; ++y)
    for (int x = region.x0; x < region.x1; ++x) {
      const glm::dvec2 p = view.image_position({x + 0.5, y + 0.5});
      v.positions.push_back(p.y);
      v.positions.push_back(p.x);
      // Away from the extent's edge, where float and double could disagree.
      const double e = 1e-3;
      v.mask.inside.push_back(p.x > -0.5 + e && p.y > -0.5 + e && p.x < src.width - 0.5 - e &&
                              p.y < src.height - 0.5 - e);
    }
  v.inside = static_cast<double>(std::count(v.mask.inside.begin(), v.mask.inside.end(), true));
  return v;
}

bool check_covered_and_not_blank(const Rgb& img, const View& v, const Source& src) {
  const double m = static_cast<double>(v.size());
  check(v.inside > 0.1 * m, (v.name + ": the image covers a good part of the view").c_str(),
        fmt("%.0f of %.0f pixels", v.inside, m));
  if (v.inside <= 0.1 * m) return false;
  const double sd = luminance_stddev(img, v.mask);
  const std::size_t colours = distinct_colours(img, v.mask);
  // A grey image has at most 256 displayable values.
  const std::size_t min_colours = src.channels == 1 ? 150 : 1000;
  check(sd > 10 && colours > min_colours, (v.name + ": not blank").c_str(),
        fmt("luminance stddev %.1f, %.0f distinct colours in the image", sd,
            static_cast<double>(colours)));
  return true;
}

// Fraction of image pixels showing their nearest sample exactly (8-bit in, float texture,
// 8-bit out, so within one level).
double nearest_match(const Rgb& img, const View& v, const Source& src) {
  double exact = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v.mask.inside[i]) continue;
    const long sx = static_cast<long>(std::floor(v.positions[2 * i + 1] + 0.5));
    const long sy = static_cast<long>(std::floor(v.positions[2 * i] + 0.5));
    bool same = true;
    for (int c = 0; c < 3; ++c) {
      const std::size_t sc = src.channels == 1 ? 0 : static_cast<std::size_t>(c);
      same = same && std::abs(img.at(v.px(i), v.py(i), c) -
                              to_byte(src.samples.at2(static_cast<std::size_t>(sy),
                                                      static_cast<std::size_t>(sx), sc))) <= 1;
    }
    exact += same;
  }
  return exact / v.inside;
}

void check_nearest(const Rgb& img, const View& v, const Source& src) {
  const double match = nearest_match(img, v, src);
  check(match > 0.995,
        (v.name + ": shows the image's samples where the view puts them (not flipped or "
                  "shifted)")
            .c_str(),
        fmt("%.4f of %.0f pixels within 1 level", match, v.inside));
}

// Prefiltered cubic: the double-precision reference at the same positions. `extra_levels`
// widens the bounds by an error the flavour has by design (the LUT's table).
void check_reference(const Rgb& img, const View& v, const Source& src, double extra_levels) {
  std::vector<double> reference(v.size() * src.channels);
  sv::sample(src.coefficients, v.positions.data(), v.size(), reference.data(),
             {3, sv::Boundary::Reflect});
  double sum_error = 0, max_error = 0, within = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v.mask.inside[i]) continue;
    double worst = 0;
    for (int c = 0; c < 3; ++c) {
      const std::size_t sc = src.channels == 1 ? 0 : static_cast<std::size_t>(c);
      const double e =
          std::abs(img.at(v.px(i), v.py(i), c) - to_byte(reference[i * src.channels + sc]));
      worst = std::max(worst, e);
      sum_error += e;
    }
    max_error = std::max(max_error, worst);
    within += worst <= 2 + extra_levels;
  }
  // Display rounding gives 1 level; hardware bilinear weights (8 fractional bits on many
  // GPUs) add up to about 2 levels on noise. A border that does not match the reflect
  // boundary shows up as errors of many levels along the image edges.
  const double mean = sum_error / (3.0 * v.inside);
  check(within / v.inside > 0.999 && mean < 0.5 + extra_levels / 4 && max_error <= 4 + extra_levels,
        (v.name + ": matches the double-precision CPU reference").c_str(),
        fmt("mean error %.3f levels, max %.0f levels, %.5f of pixels within 2 levels", mean,
            max_error, within / v.inside));
}

// Largest and mean difference between two views of the same positions (same region size).
void check_close(const Rgb& img, const View& a, const View& b, double bound_levels,
                 const char* what) {
  double max_diff = 0, sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!a.mask.inside[i]) continue;
    for (int c = 0; c < 3; ++c) {
      const double d = std::abs(img.at(a.px(i), a.py(i), c) - img.at(b.px(i), b.py(i), c));
      max_diff = std::max(max_diff, d);
      sum += d;
    }
  }
  check(max_diff <= bound_levels, what,
        fmt("max difference %.0f levels (bound %.1f), mean %.3f", max_diff, bound_levels,
            sum / (3.0 * a.inside)));
}

// Cubic versus nearest in two views of the same positions.
void check_cubic_vs_nearest(const Rgb& cubic_img, const View& cubic, const Rgb& nearest_img,
                            const View& nearest, double zoom) {
  double diff = 0;
  for (std::size_t i = 0; i < cubic.size(); ++i) {
    if (!cubic.mask.inside[i]) continue;
    for (int c = 0; c < 3; ++c)
      diff += std::abs(cubic_img.at(cubic.px(i), cubic.py(i), c) -
                       nearest_img.at(nearest.px(i), nearest.py(i), c));
  }
  diff /= 3.0 * cubic.inside;
  check(diff > 1.0, (cubic.name + " and " + nearest.name + " differ in the image area").c_str(),
        fmt("mean absolute difference %.2f levels", diff));
  const Gradient gn = horizontal_gradient(nearest_img, nearest.mask);
  const Gradient gc = horizontal_gradient(cubic_img, cubic.mask);
  check(gc.energy < 0.5 * gn.energy,
        (cubic.name + " is smoother than " + nearest.name + " (gradient energy)").c_str(),
        fmt("mean squared horizontal difference: cubic %.2f, nearest %.2f", gc.energy, gn.energy));
  const double expected_runs = 1.0 - 1.0 / zoom;
  check(gn.zero_fraction > 0.9 * expected_runs && gc.zero_fraction < 0.5 * gn.zero_fraction,
        (nearest.name + " shows constant runs of zoom pixels, " + cubic.name + " does not").c_str(),
        fmt("equal horizontal neighbours: nearest %.3f (blocks of %g px would give about %.3f)",
            gn.zero_fraction, zoom, expected_runs) +
            fmt(", cubic %.3f", gc.zero_fraction));
}

bool is_cubic_flavour(const std::string& m) {
  return m == "otf" || m == "precise" || m == "lut" || m == "cubic";
}

// Measured filter precision of 8-bit hardware weights on NVIDIA (docs/DESIGN.md, how the GPU
// tests set their bounds), in texels.
constexpr double kEightBitFilterPrecision = 5.9e-3;

// Levels that otf may differ from precise: 2 axes x filter precision x coefficient range,
// plus one level of display rounding on each.
double otf_bound_levels(const Source& src) {
  const auto [lo, hi] =
      std::minmax_element(src.coefficients.vec().begin(), src.coefficients.vec().end());
  return 2.0 + 255.0 * 2.0 * kEightBitFilterPrecision * (*hi - *lo);
}

// Allowance for the LUT's own error (half-float table of 128 texels, linearly interpolated),
// in display levels. On Mesa (hardware filtering exact to 4e-6) the LUT view stays within 1
// level of the reference on the bundled photograph; 2 levels leave room for the table's
// rounding on noise, where coefficients span about twice the sample range.
constexpr double kLutExtraLevels = 2.0;

void check_method(const Rgb& img, const View& v, const Source& src, const std::string& method) {
  if (method == "nearest") check_nearest(img, v, src);
  if (method == "otf" || method == "precise" || method == "cubic") check_reference(img, v, src, 0);
  if (method == "lut") check_reference(img, v, src, kLutExtraLevels);
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::string::size_type start = 0;
  while (true) {
    const std::string::size_type comma = text.find(',', start);
    parts.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

Source load_source(const std::string& path) {
  Source src;
  sv::Loaded loaded = sv::load_image(path);
  sv::scale_to_unit(loaded);  // as the viewer shows it
  src.samples = std::move(loaded.array);
  src.channels = src.samples.channels();
  src.width = static_cast<int>(src.samples.dim(1));
  src.height = static_cast<int>(src.samples.dim(0));
  src.coefficients = src.samples;
  sv::prefilter<double>(src.coefficients, {3, sv::Boundary::Reflect, 0});
  return src;
}

bool parse_center(const char* arg, const Source& src, glm::dvec2* center) {
  *center = glm::dvec2(src.width / 2.0 - 0.5, src.height / 2.0 - 0.5);
  if (arg && std::sscanf(arg, "%lf,%lf", &center->x, &center->y) != 2) {
    std::fprintf(stderr, "bad X,Y: %s\n", arg);
    return false;
  }
  return true;
}

void check_size(const Rgb& img, const char* name, int width, int height) {
  check(img.width == width && img.height == height,
        (std::string(name) + " screenshot has the requested size").c_str(),
        fmt("%gx%g, requested ", img.width, img.height) + fmt("%gx%g", width, height));
}

// The multi-view form: METHODS in layout order (wipe: left, right).
int check_layout(const std::string& layout_arg, const std::string& methods_arg,
                 const std::string& image_path, const std::string& shot_path, double zoom,
                 int width, int height, double panel, const char* center_arg) {
  const std::optional<sv::viewer::Layout> layout = sv::viewer::parse_layout(layout_arg);
  const std::vector<std::string> methods = split_commas(methods_arg);
  if (!layout || static_cast<int>(methods.size()) != sv::viewer::method_count(*layout)) {
    std::fprintf(stderr, "bad layout %s or wrong number of methods in %s\n", layout_arg.c_str(),
                 methods_arg.c_str());
    return 2;
  }
  const Rgb shot = load_png(shot_path);
  check_size(shot, layout_arg.c_str(), width, height);
  if (failures) return 1;
  const Source src = load_source(image_path);
  glm::dvec2 center;
  if (!parse_center(center_arg, src, &center)) return 2;

  const sv::viewer::Rect area{panel, 0, width - panel, static_cast<double>(height)};
  const std::vector<sv::viewer::Rect> cells = sv::viewer::layout_cells(*layout, area);
  const sv::viewer::Rect local{0, 0, cells[0].width, cells[0].height};
  const sv::viewer::ViewTransform shared =
      sv::viewer::ViewTransform::looking_at(center, local, zoom);
  std::vector<View> views;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const sv::viewer::Rect& c = cells[i];
    const int x0 = static_cast<int>(c.x), y0 = static_cast<int>(c.y);
    const int x1 = x0 + static_cast<int>(c.width), y1 = y0 + static_cast<int>(c.height);
    const sv::viewer::ViewTransform view = shared.shifted({c.x, c.y});
    if (*layout == sv::viewer::Layout::Wipe) {
      const int d = sv::viewer::wipe_divider_x(c, 0.5);
      views.push_back(make_view("left (" + methods[0] + ")",
                                {x0 + kMargin, d - kDividerMargin, y0 + kLabelBand, y1 - kMargin},
                                view, src));
      views.push_back(make_view("right (" + methods[1] + ")",
                                {d + kDividerMargin, x1 - kMargin, y0 + kLabelBand, y1 - kMargin},
                                view, src));
    } else {
      views.push_back(make_view("view " + std::to_string(i + 1) + " (" + methods[i] + ")",
                                {x0 + kMargin, x1 - kMargin, y0 + kLabelBand, y1 - kMargin}, view,
                                src));
    }
  }
  for (std::size_t i = 0; i < views.size(); ++i) {
    if (!check_covered_and_not_blank(shot, views[i], src)) return 1;
    check_method(shot, views[i], src, methods[i]);
  }

  if (*layout == sv::viewer::Layout::Wipe) {
    // The sides show different methods: nearest has constant runs of about `zoom` pixels, a
    // smooth method far fewer (robust whatever the image content).
    const Gradient gl = horizontal_gradient(shot, views[0].mask);
    const Gradient gr = horizontal_gradient(shot, views[1].mask);
    const double lo = std::min(gl.zero_fraction, gr.zero_fraction);
    const double hi = std::max(gl.zero_fraction, gr.zero_fraction);
    check(methods[0] != methods[1] && lo < 0.5 * hi,
          "the wipe shows different methods on its two sides",
          fmt("equal horizontal neighbours: left %.3f, right %.3f", gl.zero_fraction,
              gr.zero_fraction));
    return failures;
  }
  // Pairs of views of the same positions.
  const auto find = [&](const std::string& m) -> const View* {
    for (std::size_t i = 0; i < views.size(); ++i)
      if (methods[i] == m) return &views[i];
    return nullptr;
  };
  const View* otf = find("otf");
  const View* precise = find("precise");
  if (otf && precise) {
    const double bound = otf_bound_levels(src);
    check_close(shot, *precise, *otf, bound,
                "precise and otf differ by at most the 8-bit filter-weight bound");
  }
  if (const View* nearest = find("nearest")) {
    for (std::size_t i = 0; i < views.size(); ++i)
      if (is_cubic_flavour(methods[i]))
        check_cubic_vs_nearest(shot, views[i], shot, *nearest, zoom);
  }
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::strcmp(argv[1], "--make-noise") == 0)
    return make_noise(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
  if ((argc == 10 || argc == 11) && std::strcmp(argv[1], "--layout") == 0) {
    const int result =
        check_layout(argv[2], argv[3], argv[4], argv[5], std::atof(argv[6]), std::atoi(argv[7]),
                     std::atoi(argv[8]), std::atof(argv[9]), argc == 11 ? argv[10] : nullptr);
    if (result == 2) return 2;
    std::printf("%s\n", failures ? "screenshot checks FAILED" : "all screenshot checks passed");
    return failures ? 1 : 0;
  }
  if (argc != 8 && argc != 9) {
    std::fprintf(stderr,
                 "usage: %s IMAGE NEAREST.png CUBIC.png ZOOM WIDTH HEIGHT PANEL_WIDTH [X,Y]\n"
                 "   or: %s --layout pair|grid|wipe M1,M2[,M3,M4] IMAGE SHOT.png ZOOM WIDTH "
                 "HEIGHT PANEL_WIDTH [X,Y]\n"
                 "  X,Y: the image position at the centre of the views (default: image centre)\n"
                 "   or: %s --make-noise OUT.png WIDTH HEIGHT\n",
                 argv[0], argv[0], argv[0]);
    return 2;
  }
  const Rgb nearest_img = load_png(argv[2]);
  const Rgb cubic_img = load_png(argv[3]);
  const double zoom = std::atof(argv[4]);
  const int width = std::atoi(argv[5]), height = std::atoi(argv[6]);
  const double panel = std::atof(argv[7]);
  check_size(nearest_img, "nearest", width, height);
  check_size(cubic_img, "cubic", width, height);
  if (failures) return 1;
  const Source src = load_source(argv[1]);
  glm::dvec2 center;
  if (!parse_center(argc == 9 ? argv[8] : nullptr, src, &center)) return 2;

  // The single view fills the area right of the panel.
  const sv::viewer::Rect area{panel, 0, width - panel, static_cast<double>(height)};
  const sv::viewer::ViewTransform view = sv::viewer::ViewTransform::looking_at(center, area, zoom);
  const Region region{static_cast<int>(panel) + kMargin, width - kMargin, kLabelBand,
                      height - kMargin};
  const View nearest = make_view("nearest", region, view, src);
  const View cubic = make_view("cubic", region, view, src);
  if (!check_covered_and_not_blank(nearest_img, nearest, src) ||
      !check_covered_and_not_blank(cubic_img, cubic, src))
    return 1;
  check_nearest(nearest_img, nearest, src);
  check_reference(cubic_img, cubic, src, 0);
  check_cubic_vs_nearest(cubic_img, cubic, nearest_img, nearest, zoom);

  std::printf("%s\n", failures ? "screenshot checks FAILED" : "all screenshot checks passed");
  return failures ? 1 : 0;
}
