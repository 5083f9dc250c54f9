// FFD registration on the CPU: the SSD + bending-energy objective with its exact gradient (the
// adjoint of the tile-structured field evaluation), L-BFGS / gradient descent with a
// backtracking line search, and the coarse-to-fine driver (splineview/registration.h).
#include "splineview/registration.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "ffd_text.h"
#include "parallel.h"
#include "registration_parts.h"
#include "splineview/bspline.h"
#include "splineview/error.h"
#include "splineview/ffd.h"
#include "splineview/ffd_warp.h"
#include "splineview/prefilter.h"
#include "splineview/pyramid.h"
#include "splineview/registration_nmi.h"
#include "splineview/sampler.h"

namespace sv {

namespace {

using detail::axis_name;
using detail::shape_text;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

template <class T>
void check_image(const Array<T>& a, const char* which) {
  if (a.empty()) throw Error(std::string("registration: the ") + which + " image is empty");
  if (a.rank() != 2 && a.rank() != 3)
    throw Error(std::string("registration: the ") + which + " image must be 2-D or 3-D, got rank " +
                std::to_string(a.rank()));
  if (a.channels() != 1)
    throw Error(std::string("registration: the ") + which +
                " image must have one channel (intensity), got " + std::to_string(a.channels()));
  for (T v : a.vec())
    if (!std::isfinite(static_cast<double>(v)))
      throw Error(std::string("registration: the ") + which + " image has a non-finite value");
}

template <class T>
void check_pair(const Array<T>& fixed, const Array<T>& moving) {
  check_image(fixed, "fixed");
  check_image(moving, "moving");
  if (fixed.dims() != moving.dims())
    throw Error("registration: the fixed image (" + shape_text(fixed.dims()) +
                ") and the moving image (" + shape_text(moving.dims()) +
                ") must have the same shape");
}

void check_spacing(const std::vector<int>& spacing, std::size_t rank) {
  if (spacing.size() != rank)
    throw Error("registration: the control-point spacing has " + std::to_string(spacing.size()) +
                " entries, the " + std::to_string(rank) + "-D images need one per axis");
  for (std::size_t a = 0; a < rank; ++a)
    if (spacing[a] < 1)
      throw Error(std::string("registration: the control-point spacing along axis ") +
                  axis_name(rank, a) + " must be at least 1 voxel, got " +
                  std::to_string(spacing[a]));
}

void check_boundary(Boundary b) {
  if (b != Boundary::Reflect && b != Boundary::Mirror && b != Boundary::Periodic)
    throw Error(std::string("registration: the moving image's boundary must be reflect, mirror "
                            "or periodic (an exact spline extension), got ") +
                boundary_name(b));
}

}  // namespace

// ---- The objective ---------------------------------------------------------------------------

template <class T>
std::vector<std::size_t> check_ffd_objective(const Array<T>& fixed, const Array<T>& moving,
                                             const std::vector<int>& spacing, double bending_weight,
                                             Boundary boundary) {
  check_pair(fixed, moving);
  check_spacing(spacing, fixed.rank());
  check_boundary(boundary);
  if (!(bending_weight >= 0) || !std::isfinite(bending_weight))
    throw Error("registration: the bending-energy weight must be finite and >= 0, got " +
                std::to_string(bending_weight));
  return ffd_grid_shape(fixed.dims(), spacing);
}

void check_ffd_objective_grid(const Array<double>& grid, const std::vector<int>& spacing,
                              const std::vector<std::size_t>& image_shape,
                              const std::vector<std::size_t>& grid_shape) {
  check_ffd_grid(grid, spacing, image_shape);
  if (grid.dims() != grid_shape)
    throw Error("registration: the control grid is " + shape_text(grid.dims()) +
                ", the objective's images need " + shape_text(grid_shape));
  for (double v : grid.vec())
    if (!(std::abs(v) <= kMaxWarpDisplacement))
      throw Error("registration: a control-point displacement of " + std::to_string(v) +
                  " voxels is beyond the limit of " + std::to_string(kMaxWarpDisplacement));
}

template <class T>
FfdSsdObjective<T>::FfdSsdObjective(const Array<T>& fixed, const Array<T>& moving,
                                    std::vector<int> spacing, double bending_weight,
                                    Boundary boundary, unsigned threads)
    : fixed_(fixed),
      coefficients_(moving),
      spacing_(std::move(spacing)),
      weight_(bending_weight),
      boundary_(boundary),
      threads_(threads ? threads : default_thread_count()) {
  grid_shape_ = check_ffd_objective(fixed, moving, spacing_, bending_weight, boundary);
  PrefilterOptions po;
  po.degree = 3;
  po.boundary = boundary;
  po.threads = threads_;
  prefilter(coefficients_, po);
}

template <class T>
double FfdSsdObjective<T>::evaluate(const Array<double>& grid, Array<double>* gradient,
                                    double* ssd_out, double* energy_out,
                                    FfdStageTimes* times) const {
  const std::size_t R = fixed_.rank();
  check_ffd_objective_grid(grid, spacing_, fixed_.dims(), grid_shape_);
  const detail::FfdView view = detail::ffd_view(fixed_.dims(), grid.dims(), spacing_);
  const std::size_t voxels = view.voxels();

  // 1. The field.
  auto t0 = Clock::now();
  const Array<T> u = ffd_field<T>(Array<T>::from(grid), spacing_, fixed_.dims(), threads_);
  if (times) times->field += seconds_since(t0);

  // 2. The warp: M and grad M at x + u(x), residuals; per voxel g = 2 r grad M / N.
  t0 = Clock::now();
  const bool want_grad = gradient != nullptr;
  Array<double> g;
  if (want_grad) g = Array<double>(fixed_.dims(), R);
  const std::size_t rows = view.rows();
  std::vector<double> row_ssd(rows, 0.0);
  const double scale = 2.0 / static_cast<double>(voxels);
  const T* coef = coefficients_.data();
  const T* fix = fixed_.data();
  const T* uf = u.data();
  detail::parallel_for(
      rows, detail::thread_count(threads_, rows, 4), [&](std::size_t b, std::size_t e) {
        for (std::size_t row = b; row < e; ++row) {
          for (std::size_t x = 0; x < view.N[2]; ++x) {
            const std::size_t v = row * view.N[2] + x;
            double d[3];
            const double val =
                detail::spline_value_gradient(coef, view, row, x, uf + v * R, boundary_, d);
            const double r = val - static_cast<double>(fix[v]);
            row_ssd[row] += r * r;
            if (want_grad) {
              double* gv = g.data() + v * R;
              for (std::size_t a = 0; a < R; ++a) gv[a] = scale * r * d[a + view.off];
            }
          }
        }
      });
  double ssd = 0;
  for (double s : row_ssd) ssd += s;
  ssd /= static_cast<double>(voxels);
  if (times) times->warp += seconds_since(t0);

  // 3. The adjoint of the field evaluation, one axis at a time (x, then y, then z).
  if (want_grad) {
    t0 = Clock::now();
    detail::ffd_adjoint(g, view, grid.dims(), threads_, *gradient);
    if (times) times->gradient += seconds_since(t0);
  }

  // 4. The regulariser.
  t0 = Clock::now();
  double energy = 0;
  if (weight_ > 0 || energy_out) {
    Array<double> ge;
    energy = ffd_bending_energy(grid, spacing_, want_grad && weight_ > 0 ? &ge : nullptr, threads_);
    if (want_grad && weight_ > 0)
      for (std::size_t i = 0; i < ge.size(); ++i) (*gradient)[i] += weight_ * ge[i];
  }
  if (times) times->regulariser += seconds_since(t0);
  if (ssd_out) *ssd_out = ssd;
  if (energy_out) *energy_out = energy;
  return ssd + weight_ * energy;
}

// ---- The optimiser ---------------------------------------------------------------------------

namespace {

// The optimiser's vector work over the grid's n values, split over threads in fixed blocks of
// kBlock values: element-wise updates touch disjoint blocks, and every sum is taken per block (in
// index order) and then over the blocks in order, so the results are the same bit for bit for any
// thread count. One pass updates vectors and takes up to kSlots sums or maxima together (one
// sweep over memory instead of one per operation; on a 1.26-million-value grid each sweep is
// tens of MB). The threads live as long as the object (a level): an iteration makes about 2m + 3
// passes (m the L-BFGS memory), and starting threads for each would cost more than the sweep.
// The caller takes the first share of blocks itself; the others wait on a condition variable
// between passes (no spinning while the objective runs).
class VectorWork {
 public:
  static constexpr std::size_t kBlock = 8192;
  static constexpr std::size_t kSlots = 4;
  using Results = std::array<double, kSlots>;

  VectorWork(std::size_t n, unsigned threads)
      : n_(n),
        blocks_((n + kBlock - 1) / kBlock),
        threads_(detail::thread_count(threads, blocks_, 4)),
        part_(blocks_ * kSlots) {
    for (unsigned t = 1; t < threads_; ++t) pool_.emplace_back([this, t] { worker(t); });
  }
  ~VectorWork() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : pool_) t.join();
  }
  VectorWork(const VectorWork&) = delete;
  VectorWork& operator=(const VectorWork&) = delete;

  // fn(begin, end, r): updates [begin, end) and writes its partial results to r[0 .. kSlots)
  // (zeroed; maxima of absolute values start from 0 too). Returns slot k summed over the blocks
  // in order, or their largest where is_max[k].
  template <class Fn>
  Results pass(Fn&& fn, std::array<bool, kSlots> is_max = {}) {
    std::fill(part_.begin(), part_.end(), 0.0);
    job_ = [&](std::size_t b, std::size_t e) {
      for (std::size_t k = b; k < e; ++k)
        fn(k * kBlock, std::min(n_, (k + 1) * kBlock), part_.data() + k * kSlots);
    };
    if (threads_ > 1) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ++generation_;
        pending_ = threads_ - 1;
      }
      wake_.notify_all();
    }
    share(0);
    if (threads_ > 1) {
      std::unique_lock<std::mutex> lock(mutex_);
      done_.wait(lock, [&] { return pending_ == 0; });
    }
    Results out{};
    for (std::size_t k = 0; k < blocks_; ++k)
      for (std::size_t s = 0; s < kSlots; ++s) {
        const double v = part_[k * kSlots + s];
        out[s] = is_max[s] ? std::max(out[s], v) : out[s] + v;
      }
    return out;
  }

 private:
  // Thread t's contiguous share of the blocks.
  void share(unsigned t) {
    const std::size_t chunk = (blocks_ + threads_ - 1) / threads_;
    const std::size_t b = t * chunk, e = std::min(blocks_, b + chunk);
    if (b < e) job_(b, e);
  }
  void worker(unsigned t) {
    std::size_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      share(t);
      std::lock_guard<std::mutex> lock(mutex_);
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::size_t n_, blocks_;
  unsigned threads_;
  std::vector<double> part_;
  std::function<void(std::size_t, std::size_t)> job_;
  std::vector<std::thread> pool_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::size_t generation_ = 0;
  unsigned pending_ = 0;
  bool stop_ = false;
};

constexpr std::array<bool, VectorWork::kSlots> kSumMax = {false, true, false, false};

// An L-BFGS correction pair with its products s . y and y . y (taken once, when stored). The
// buffers are left uninitialised: the pass that fills them touches their pages first, in
// parallel.
struct Correction {
  std::unique_ptr<double[]> s, y;
  double sy = 0, yy = 0;
};

// The passes below keep their sums in locals (a sum through the result pointer would be reloaded
// after every store to the vectors) and work on raw pointers.
void optimise_level(const FfdObjective& obj, Array<double>& grid, const FfdRegistrationOptions& opt,
                    FfdLevelHistory& hist, FfdStageTimes& times) {
  Array<double> gA;
  double ssd = 0, energy = 0;
  double f = obj.evaluate(grid, &gA, &ssd, &energy, &times);
  ++hist.evaluations;
  hist.ssd.push_back(ssd);
  hist.energy.push_back(energy);
  hist.objective.push_back(f);
  const std::size_t n = grid.size();
  VectorWork work(n, opt.threads);
  std::vector<double> x = grid.vec(), gvec = std::move(gA.vec()), d(n);
  std::deque<Correction> mem;
  Correction spare;     // the buffers of the pair that left the memory, reused for the next
  double gd_alpha = 0;  // gradient descent: the last accepted step
  hist.stop = "iterations";
  const bool lbfgs = opt.optimizer == FfdOptimizer::Lbfgs;
  Array<double> trial(grid.dims(), grid.channels()), gT;
  double* D = d.data();
  double* T = trial.vec().data();
  auto largest = [&](const double* v) {
    return work.pass(
        [&](std::size_t b, std::size_t e, double* p) {
          double m = 0;
          for (std::size_t i = b; i < e; ++i) m = std::max(m, std::abs(v[i]));
          p[0] = m;
        },
        {true})[0];
  };
  double gmax = largest(gvec.data());
  for (int it = 0; it < opt.iterations; ++it) {
    if (gmax == 0) {
      hist.stop = "gradient";
      break;
    }
    const double* X = x.data();
    const double* G = gvec.data();
    // The direction, with slope = d . g and max |d|.
    VectorWork::Results r{};
    auto steepest = [&] {
      r = work.pass(
          [&](std::size_t b, std::size_t e, double* p) {
            double dg = 0, m = 0;
            for (std::size_t i = b; i < e; ++i) {
              D[i] = -G[i];
              dg += D[i] * G[i];
              m = std::max(m, std::abs(D[i]));
            }
            p[0] = dg;
            p[1] = m;
          },
          kSumMax);
    };
    if (!lbfgs || mem.empty()) {
      steepest();
    } else {
      // The two-loop recursion; each step's update of d shares its pass with the next step's
      // dot product.
      const std::size_t m = mem.size();
      std::vector<double> alpha(m);
      // d += a u, then sum v . d (a = 0: no update; scale: d = scale (d + a u) when not 1).
      auto update_dot = [&](double a, const double* u, const double* v, double scale) {
        return work.pass([&](std::size_t b, std::size_t e, double* p) {
          double s = 0;
          if (scale == 1.0) {
            for (std::size_t i = b; i < e; ++i) {
              D[i] += a * u[i];
              s += v[i] * D[i];
            }
          } else {
            for (std::size_t i = b; i < e; ++i) {
              D[i] = scale * (D[i] + a * u[i]);
              s += v[i] * D[i];
            }
          }
          p[0] = s;
        })[0];
      };
      const double* s_top = mem[m - 1].s.get();
      double dot = work.pass([&](std::size_t b, std::size_t e, double* p) {
        double s = 0;
        for (std::size_t i = b; i < e; ++i) {
          D[i] = -G[i];
          s += s_top[i] * D[i];
        }
        p[0] = s;
      })[0];
      const double gamma = mem.back().sy / mem.back().yy;
      for (std::size_t k = m; k-- > 0;) {
        alpha[k] = dot / mem[k].sy;
        // The last update is followed by the initial Hessian gamma I and then y_0 . d.
        dot = k > 0 ? update_dot(-alpha[k], mem[k].y.get(), mem[k - 1].s.get(), 1.0)
                    : update_dot(-alpha[0], mem[0].y.get(), mem[0].y.get(), gamma);
      }
      for (std::size_t k = 0; k < m; ++k) {
        const double c = alpha[k] - dot / mem[k].sy;
        const double* sk = mem[k].s.get();
        if (k + 1 < m) {
          dot = update_dot(c, sk, mem[k + 1].y.get(), 1.0);
        } else {
          r = work.pass(
              [&](std::size_t b, std::size_t e, double* p) {
                double dg = 0, mx = 0;
                for (std::size_t i = b; i < e; ++i) {
                  D[i] += c * sk[i];
                  dg += D[i] * G[i];
                  mx = std::max(mx, std::abs(D[i]));
                }
                p[0] = dg;
                p[1] = mx;
              },
              kSumMax);
        }
      }
      if (r[0] >= 0) {  // not a descent direction: restart from steepest descent
        mem.clear();
        steepest();
      }
    }
    const double slope = r[0];
    const double cap = opt.max_step / r[1];
    double alpha;
    if (lbfgs)
      alpha = mem.empty() ? cap : std::min(1.0, cap);
    else
      alpha = gd_alpha > 0 ? std::min(cap, 2 * gd_alpha) : cap;
    // Backtracking (Armijo).
    bool accepted = false;
    double f_new = f, ssd_new = 0, energy_new = 0;
    for (int bt = 0; bt <= opt.max_backtracks; ++bt) {
      work.pass([&](std::size_t b, std::size_t e, double*) {
        for (std::size_t i = b; i < e; ++i) T[i] = X[i] + alpha * D[i];
      });
      f_new = obj.evaluate(trial, &gT, &ssd_new, &energy_new, &times);
      ++hist.evaluations;
      if (f_new <= f + opt.armijo * alpha * slope) {
        accepted = true;
        break;
      }
      alpha *= 0.5;
    }
    if (!accepted) {
      hist.stop = "line search";
      break;
    }
    gd_alpha = alpha;
    // The new pair s = x_new - x, y = g_new - g with s . y, s . s, y . y, and max |g_new|.
    const double* GT = gT.vec().data();
    if (lbfgs) {
      if (!spare.s) {
        spare.s.reset(new double[n]);
        spare.y.reset(new double[n]);
      }
      double* S = spare.s.get();
      double* Y = spare.y.get();
      const VectorWork::Results q = work.pass(
          [&](std::size_t b, std::size_t e, double* p) {
            double sy = 0, ss = 0, yy = 0, m = 0;
            for (std::size_t i = b; i < e; ++i) {
              const double si = T[i] - X[i], yi = GT[i] - G[i];
              S[i] = si;
              Y[i] = yi;
              sy += si * yi;
              ss += si * si;
              yy += yi * yi;
              m = std::max(m, std::abs(GT[i]));
            }
            p[0] = sy;
            p[1] = ss;
            p[2] = yy;
            p[3] = m;
          },
          {false, false, false, true});
      gmax = q[3];
      if (q[0] > 1e-12 * std::sqrt(q[1] * q[2])) {
        spare.sy = q[0];
        spare.yy = q[2];
        mem.push_back(std::move(spare));
        spare = Correction();
        if (static_cast<int>(mem.size()) > opt.lbfgs_memory) {
          spare = std::move(mem.front());
          mem.pop_front();
        }
      }
    } else {
      gmax = largest(GT);
    }
    const double decrease = f - f_new;
    x.swap(trial.vec());  // trial keeps the old values: every trial overwrites all of them
    T = trial.vec().data();
    gvec.swap(gT.vec());
    f = f_new;
    ++hist.iterations;
    hist.ssd.push_back(ssd_new);
    hist.energy.push_back(energy_new);
    hist.objective.push_back(f);
    if (decrease <= opt.tolerance * std::abs(f)) {
      hist.stop = "tolerance";
      break;
    }
  }
  grid.vec().swap(x);
}

// The grid cut or padded with zero points at the high end of each axis to `shape`: the field
// on an image of the grid's shape is unchanged (points beyond floor((N - 1) / delta) + 3 touch
// no voxel; missing points count as zero).
Array<double> fit_grid(const Array<double>& g, const std::vector<std::size_t>& shape) {
  Array<double> out(shape, g.channels());
  const std::size_t R = g.rank(), C = g.channels();
  std::size_t n[3] = {1, 1, 1}, m[3] = {1, 1, 1};
  for (std::size_t a = 0; a < R; ++a) {
    n[a + 3 - R] = std::min(g.dim(a), shape[a]);
    m[a + 3 - R] = g.dim(a);
  }
  std::size_t s[3] = {1, 1, 1};
  for (std::size_t a = 0; a < R; ++a) s[a + 3 - R] = shape[a];
  for (std::size_t z = 0; z < n[0]; ++z)
    for (std::size_t y = 0; y < n[1]; ++y)
      for (std::size_t x = 0; x < n[2]; ++x)
        for (std::size_t c = 0; c < C; ++c)
          out[((z * s[1] + y) * s[2] + x) * C + c] = g[((z * m[1] + y) * m[2] + x) * C + c];
  return out;
}

void check_options(const FfdRegistrationOptions& o, const std::vector<std::size_t>& dims) {
  check_spacing(o.spacing, dims.size());
  check_boundary(o.boundary);
  auto bad = [](const std::string& what) { throw Error("registration: " + what); };
  if (o.levels < 1 || o.levels > 16) bad("levels must be 1 to 16, got " + std::to_string(o.levels));
  if (o.iterations < 0) bad("iterations must be >= 0, got " + std::to_string(o.iterations));
  if (!(o.bending_weight >= 0) || !std::isfinite(o.bending_weight))
    bad("the bending-energy weight must be finite and >= 0, got " +
        std::to_string(o.bending_weight));
  if (o.metric != FfdMetric::Ssd && o.metric != FfdMetric::Nmi) bad("unknown metric");
  if (o.metric == FfdMetric::Nmi) check_nmi_bins(o.bins);
  if (o.lbfgs_memory < 1) bad("lbfgs_memory must be >= 1, got " + std::to_string(o.lbfgs_memory));
  if (!(o.max_step > 0) || !std::isfinite(o.max_step))
    bad("max_step must be a finite number of voxels > 0, got " + std::to_string(o.max_step));
  if (!(o.armijo > 0 && o.armijo < 1))
    bad("the Armijo constant must lie in (0, 1), got " + std::to_string(o.armijo));
  if (o.max_backtracks < 1)
    bad("max_backtracks must be >= 1, got " + std::to_string(o.max_backtracks));
  if (!(o.tolerance >= 0) || !std::isfinite(o.tolerance))
    bad("the tolerance must be finite and >= 0, got " + std::to_string(o.tolerance));
  if (o.image_pyramid) {
    for (std::size_t a = 0; a < dims.size(); ++a) {
      std::size_t n = dims[a];
      for (int k = 1; k < o.levels; ++k) n = (n + 1) / 2;
      if (n < 4)
        bad(std::to_string(o.levels) + " levels reduce axis " + axis_name(dims.size(), a) + " (" +
            std::to_string(dims[a]) + " voxels) to " + std::to_string(n) +
            " voxels; the image pyramid needs at least 4 (use fewer levels)");
    }
  } else {
    const long factor = 1L << (o.levels - 1);
    for (int s : o.spacing)
      if (static_cast<long>(s) * factor > (1L << 20))
        bad("the coarsest spacing " + std::to_string(s) + " x " + std::to_string(factor) +
            " is too large");
  }
}

}  // namespace

template <class T>
FfdRegistrationResult register_ffd(const Array<T>& fixed_in, const Array<T>& moving_in,
                                   const FfdRegistrationOptions& opt) {
  return register_ffd<T>(
      fixed_in, moving_in, opt,
      [](const Array<T>& fixed, const Array<T>& moving, const std::vector<int>& spacing,
         const FfdRegistrationOptions& o) -> std::unique_ptr<FfdObjective> {
        if (o.metric == FfdMetric::Nmi)
          return std::make_unique<FfdNmiObjective<T>>(fixed, moving, spacing, o.bending_weight,
                                                      o.bins, o.boundary, o.threads);
        return std::make_unique<FfdSsdObjective<T>>(fixed, moving, spacing, o.bending_weight,
                                                    o.boundary, o.threads);
      });
}

template <class T>
FfdRegistrationResult register_ffd(const Array<T>& fixed_in, const Array<T>& moving_in,
                                   const FfdRegistrationOptions& opt,
                                   const FfdObjectiveFactory<T>& make_objective) {
  if (!make_objective) throw Error("registration: no objective factory");
  const auto start = Clock::now();
  check_pair(fixed_in, moving_in);
  check_options(opt, fixed_in.dims());
  FfdRegistrationResult res;
  res.spacing = opt.spacing;
  auto t0 = Clock::now();
  const std::size_t R = fixed_in.rank();

  Array<T> fixed = fixed_in, moving = moving_in;
  if (opt.normalize_intensities) {
    double lo = static_cast<double>(fixed[0]), hi = lo;
    for (T v : fixed.vec()) {
      lo = std::min(lo, static_cast<double>(v));
      hi = std::max(hi, static_cast<double>(v));
    }
    const double s = hi > lo ? 1.0 / (hi - lo) : 1.0;
    for (T& v : fixed.vec()) v = static_cast<T>((static_cast<double>(v) - lo) * s);
    for (T& v : moving.vec()) v = static_cast<T>((static_cast<double>(v) - lo) * s);
  }

  // The pyramid, finest first.
  std::vector<Array<T>> F{fixed}, Mv{moving};
  if (opt.image_pyramid) {
    ReduceOptions ro;
    ro.degree = 3;
    ro.boundary = Boundary::Mirror;
    ro.grid = PyramidGrid::Nodes;
    ro.samples = true;
    ro.threads = opt.threads;
    for (int k = 1; k < opt.levels; ++k) {
      F.push_back(reduce2(F.back(), ro).samples);
      Mv.push_back(reduce2(Mv.back(), ro).samples);
    }
  }
  res.time.setup += seconds_since(t0);

  Array<double> grid;
  for (int k = opt.levels - 1; k >= 0; --k) {
    t0 = Clock::now();
    const Array<T>& Fk = opt.image_pyramid ? F[static_cast<std::size_t>(k)] : F[0];
    const Array<T>& Mk = opt.image_pyramid ? Mv[static_cast<std::size_t>(k)] : Mv[0];
    std::vector<int> spacing = opt.spacing;
    if (!opt.image_pyramid)
      for (int& s : spacing) s <<= k;
    const std::unique_ptr<FfdObjective> made = make_objective(Fk, Mk, spacing, opt);
    if (!made) throw Error("registration: the objective factory returned no objective");
    const FfdObjective& obj = *made;
    if (grid.empty()) {
      grid = Array<double>(obj.grid_shape(), R);
    } else {
      // Carry the grid from the coarser level: exact refinement to half the spacing (with the
      // pyramid: the coarse grid is a grid of twice the spacing in this level's voxels, its
      // displacements twice as many of them).
      std::vector<int> coarse = spacing;
      for (int& s : coarse) s *= 2;
      if (opt.image_pyramid)
        for (double& v : grid.vec()) v *= 2;
      grid = fit_grid(ffd_refine(grid, coarse), obj.grid_shape());
    }
    res.time.setup += seconds_since(t0);
    FfdLevelHistory hist;
    hist.image_shape = Fk.dims();
    hist.spacing = spacing;
    optimise_level(obj, grid, opt, hist, res.time);
    res.iterations += hist.iterations;
    res.levels.push_back(std::move(hist));
  }
  res.grid = std::move(grid);
  res.time.total = seconds_since(start);
  return res;
}

template class FfdSsdObjective<float>;
template class FfdSsdObjective<double>;
template FfdRegistrationResult register_ffd<float>(const Array<float>&, const Array<float>&,
                                                   const FfdRegistrationOptions&);
template FfdRegistrationResult register_ffd<double>(const Array<double>&, const Array<double>&,
                                                    const FfdRegistrationOptions&);
template FfdRegistrationResult register_ffd<float>(const Array<float>&, const Array<float>&,
                                                   const FfdRegistrationOptions&,
                                                   const FfdObjectiveFactory<float>&);
template FfdRegistrationResult register_ffd<double>(const Array<double>&, const Array<double>&,
                                                    const FfdRegistrationOptions&,
                                                    const FfdObjectiveFactory<double>&);
template std::vector<std::size_t> check_ffd_objective<float>(const Array<float>&,
                                                             const Array<float>&,
                                                             const std::vector<int>&, double,
                                                             Boundary);
template std::vector<std::size_t> check_ffd_objective<double>(const Array<double>&,
                                                              const Array<double>&,
                                                              const std::vector<int>&, double,
                                                              Boundary);

}  // namespace sv
