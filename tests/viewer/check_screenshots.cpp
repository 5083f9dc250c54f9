// Checks two viewer screenshots of the same image and view, one rendered with nearest and one
// with prefiltered cubic B-spline reconstruction (tests/viewer/CMakeLists.txt runs the viewer
// under Xvfb and then this program). Properties checked, each printed with its numbers:
//  - both screenshots have the requested window size and are not blank;
//  - the image area of the nearest rendering shows exactly the image's samples at the places
//    the view transform puts them (not flipped, mirrored, shifted or stretched);
//  - the cubic rendering matches the double-precision CPU reference (prefilter + cubic
//    B-spline sampler) evaluated at the same positions, to within 8-bit display precision;
//  - cubic and nearest differ substantially, and cubic is smoother: far less gradient energy,
//    and no constant runs of `zoom` pixels as nearest has.
// All image statistics use only the pixels that show the image. When the image edges are in
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
#include <random>
#include <set>
#include <string>
#include <vector>

#include <stb_image.h>
#include <stb_image_write.h>
#include <glm/glm.hpp>

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

double luminance_stddev(const Rgb& img) {
  double sum = 0, sum2 = 0;
  const double n = static_cast<double>(img.width) * img.height;
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x) {
      const double l = 0.299 * img.at(x, y, 0) + 0.587 * img.at(x, y, 1) + 0.114 * img.at(x, y, 2);
      sum += l;
      sum2 += l * l;
    }
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

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::strcmp(argv[1], "--make-noise") == 0)
    return make_noise(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
  if (argc != 8 && argc != 9) {
    std::fprintf(stderr,
                 "usage: %s IMAGE NEAREST.png CUBIC.png ZOOM WIDTH HEIGHT PANEL_WIDTH [X,Y]\n"
                 "  X,Y: the image position at the centre of the view (default: image centre)\n"
                 "   or: %s --make-noise OUT.png WIDTH HEIGHT\n",
                 argv[0], argv[0]);
    return 2;
  }
  const std::string image_path = argv[1];
  const Rgb nearest = load_png(argv[2]);
  const Rgb cubic = load_png(argv[3]);
  const double zoom = std::atof(argv[4]);
  const int width = std::atoi(argv[5]), height = std::atoi(argv[6]);
  const double panel = std::atof(argv[7]);
  const char* center_arg = argc == 9 ? argv[8] : nullptr;

  // ---- size and not blank ----
  for (const Rgb* img : {&nearest, &cubic}) {
    const char* name = img == &nearest ? "nearest" : "cubic";
    check(img->width == width && img->height == height,
          img == &nearest ? "nearest screenshot has the requested size"
                          : "cubic screenshot has the requested size",
          std::string(name) + fmt(" %gx%g, requested ", img->width, img->height) +
              fmt("%gx%g", width, height));
  }
  if (failures) return 1;
  // ---- where the image is: the view transform the viewer uses for --zoom/--center ----
  const int margin = 4;
  const Region region{static_cast<int>(panel) + margin, width - margin, margin, height - margin};
  const sv::Loaded loaded = sv::load_image(image_path);
  const sv::ArrayD& samples = loaded.array;
  const std::size_t channels = samples.channels();
  const int iw = static_cast<int>(samples.dim(1)), ih = static_cast<int>(samples.dim(0));
  const sv::viewer::Rect area{panel, 0, width - panel, static_cast<double>(height)};
  glm::dvec2 center(iw / 2.0 - 0.5, ih / 2.0 - 0.5);
  if (center_arg && std::sscanf(center_arg, "%lf,%lf", &center.x, &center.y) != 2) {
    std::fprintf(stderr, "bad X,Y: %s\n", center_arg);
    return 2;
  }
  const sv::viewer::ViewTransform view = sv::viewer::ViewTransform::looking_at(center, area, zoom);

  // Image positions (y, x) of the region's pixel centres, and whether each lies inside the
  // image extent [-0.5, N - 0.5] (away from its edge, where float and double could disagree).
  const int rw = region.x1 - region.x0;
  std::vector<double> positions;
  Mask mask{region, {}};
  for (int y = region.y0; y < region.y1; ++y)
    for (int x = region.x0; x < region.x1; ++x) {
      const glm::dvec2 p = view.image_position({x + 0.5, y + 0.5});
      positions.push_back(p.y);
      positions.push_back(p.x);
      const double e = 1e-3;
      mask.inside.push_back(p.x > -0.5 + e && p.y > -0.5 + e && p.x < iw - 0.5 - e &&
                            p.y < ih - 0.5 - e);
    }
  const std::size_t m = positions.size() / 2;
  const double inside =
      static_cast<double>(std::count(mask.inside.begin(), mask.inside.end(), true));
  check(inside > 0.1 * static_cast<double>(m), "the image covers a good part of the view",
        fmt("%.0f of %.0f pixels", inside, static_cast<double>(m)));
  if (failures) return 1;

  for (const Rgb* img : {&nearest, &cubic}) {
    const double sd = luminance_stddev(*img);
    const std::size_t colours = distinct_colours(*img, mask);
    // A grey image has at most 256 displayable values.
    const std::size_t min_colours = channels == 1 ? 150 : 1000;
    check(sd > 10 && colours > min_colours,
          img == &nearest ? "nearest screenshot is not blank" : "cubic screenshot is not blank",
          fmt("luminance stddev %.1f, %.0f distinct colours in the image", sd,
              static_cast<double>(colours)));
  }

  // Nearest: exact sample values (8-bit in, float texture, 8-bit out).
  double nearest_exact = 0;
  for (std::size_t i = 0; i < m; ++i) {
    if (!mask.inside[i]) continue;
    const int x = region.x0 + static_cast<int>(i % static_cast<std::size_t>(rw));
    const int y = region.y0 + static_cast<int>(i / static_cast<std::size_t>(rw));
    const long sx = static_cast<long>(std::floor(positions[2 * i + 1] + 0.5));
    const long sy = static_cast<long>(std::floor(positions[2 * i] + 0.5));
    bool same = true;
    for (int c = 0; c < 3; ++c) {
      const std::size_t sc = channels == 1 ? 0 : static_cast<std::size_t>(c);
      same = same && std::abs(nearest.at(x, y, c) -
                              to_byte(samples.at2(static_cast<std::size_t>(sy),
                                                  static_cast<std::size_t>(sx), sc))) <= 1;
    }
    nearest_exact += same;
  }
  const double nearest_match = nearest_exact / inside;
  check(nearest_match > 0.995,
        "nearest shows the image's samples where the view puts them (not flipped or shifted)",
        fmt("%.4f of %.0f pixels within 1 level", nearest_match, inside));

  // Prefiltered cubic: the double-precision reference at the same positions.
  sv::ArrayD coefficients = samples;
  sv::prefilter<double>(coefficients, {3, sv::Boundary::Reflect, 0});
  std::vector<double> reference(m * channels);
  sv::sample(coefficients, positions.data(), m, reference.data(), {3, sv::Boundary::Reflect});
  double sum_error = 0, max_error = 0, within = 0;
  for (std::size_t i = 0; i < m; ++i) {
    if (!mask.inside[i]) continue;
    const int x = region.x0 + static_cast<int>(i % static_cast<std::size_t>(rw));
    const int y = region.y0 + static_cast<int>(i / static_cast<std::size_t>(rw));
    double worst = 0;
    for (int c = 0; c < 3; ++c) {
      const std::size_t sc = channels == 1 ? 0 : static_cast<std::size_t>(c);
      const double e = std::abs(cubic.at(x, y, c) - to_byte(reference[i * channels + sc]));
      worst = std::max(worst, e);
      sum_error += e;
    }
    max_error = std::max(max_error, worst);
    within += worst <= 2;
  }
  // Display rounding gives 1 level; hardware bilinear weights (8 fractional bits on many
  // GPUs) add up to about 2 levels on noise. A border that does not match the reflect
  // boundary shows up as errors of many levels along the image edges.
  check(within / inside > 0.999 && sum_error / (3.0 * inside) < 0.5 && max_error <= 4,
        "prefiltered cubic matches the double-precision CPU reference",
        fmt("mean error %.3f levels, max %.0f levels, %.5f of pixels within 2 levels",
            sum_error / (3.0 * inside), max_error, within / inside));

  // ---- cubic versus nearest ----
  double diff = 0;
  for (int y = region.y0; y < region.y1; ++y)
    for (int x = region.x0; x < region.x1; ++x)
      if (mask.at(x, y))
        for (int c = 0; c < 3; ++c) diff += std::abs(cubic.at(x, y, c) - nearest.at(x, y, c));
  diff /= 3.0 * inside;
  check(diff > 1.0, "cubic and nearest differ in the image area",
        fmt("mean absolute difference %.2f levels", diff));

  const Gradient gn = horizontal_gradient(nearest, mask);
  const Gradient gc = horizontal_gradient(cubic, mask);
  check(gc.energy < 0.5 * gn.energy, "cubic is smoother than nearest (gradient energy)",
        fmt("mean squared horizontal difference: cubic %.2f, nearest %.2f", gc.energy, gn.energy));
  const double expected_runs = 1.0 - 1.0 / zoom;
  check(gn.zero_fraction > 0.9 * expected_runs && gc.zero_fraction < 0.5 * gn.zero_fraction,
        "nearest shows constant runs of zoom pixels, cubic does not",
        fmt("equal horizontal neighbours: nearest %.3f (blocks of %g px would give about %.3f)",
            gn.zero_fraction, zoom, expected_runs) +
            fmt(", cubic %.3f", gc.zero_fraction));

  std::printf("%s\n", failures ? "screenshot checks FAILED" : "all screenshot checks passed");
  return failures ? 1 : 0;
}
