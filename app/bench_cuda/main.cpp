// splinebench-cuda: CUDA prefilter, reconstruction and upscaling speed on the current device.
// Subcommands: prefilter, reconstruct, upscale, out-of-core, ffd, registration, bspline, pyramid,
// grbf. Each writes a JSON report to --out and prints a Markdown table on stdout. Exit status: 0
// success, 1 the benchmark failed (e.g. no CUDA device), 2 bad command line.
#include <cstdio>
#include <exception>
#include <fstream>
#include <string>

#include <CLI/CLI.hpp>

#include "bench_cuda.h"
#include "splineview/cuda_memory.h"

int main(int argc, char** argv) {
  CLI::App app{
      "splinebench-cuda: speed of the CUDA B-spline prefilter, reconstruction, upscaling and "
      "FFD field evaluation.",
      "splinebench-cuda"};
  app.require_subcommand(1);
  std::string out;

  cbench::PrefilterOptions pf;
  CLI::App* prefilter = app.add_subcommand(
      "prefilter",
      "per-axis and total prefilter time at the published sizes, GB/s and the fraction of a "
      "device-to-device copy measured in the same run; tiled vs naive kernels");
  prefilter->add_option("--out", out, "JSON report file")->type_name("FILE");
  prefilter->add_flag("--quick", pf.quick, "small sizes, few repeats");
  prefilter->add_option("--only", pf.only, "only the case whose name starts with this, e.g. 256^3")
      ->type_name("NAME");
  prefilter->add_option("--repeats", pf.repeats, "timed runs per case")->capture_default_str();
  prefilter->add_option("--seed", pf.seed, "seed of the random data")->capture_default_str();

  cbench::ReconstructOptions rc;
  CLI::App* reconstruct = app.add_subcommand(
      "reconstruct",
      "reconstructions per second at random positions in a 256^3 volume: hardware trilinear, "
      "texture-hardware cubic, precise cubic");
  reconstruct->add_option("--out", out, "JSON report file")->type_name("FILE");
  reconstruct->add_flag("--quick", rc.quick, "small sizes, few repeats");
  reconstruct->add_option("--repeats", rc.repeats, "timed runs per case")->capture_default_str();
  reconstruct->add_option("--positions", rc.positions, "random positions per run")
      ->capture_default_str();
  reconstruct->add_option("--seed", rc.seed, "seed of the random positions")->capture_default_str();

  cbench::UpscaleOptions up;
  CLI::App* upscale = app.add_subcommand(
      "upscale",
      "live-video upscaling per frame to 3840x2160 (factors 2, 3, 4): unpack, prefilter, "
      "thread-per-tile upscale (cubic, linear, nearest; float and 8-bit out), the whole device "
      "chain, against a copy and a write-only fill of the output");
  upscale->add_option("--out", out, "JSON report file")->type_name("FILE");
  upscale->add_flag("--quick", up.quick, "one small frame, few repeats");
  upscale->add_option("--repeats", up.repeats, "timed runs per step")->capture_default_str();
  upscale->add_option("--seed", up.seed, "seed of the random frames")->capture_default_str();

  cbench::OutOfCoreOptions oc;
  CLI::App* ooc = app.add_subcommand(
      "out-of-core",
      "the out-of-core prefilter of a host volume of 512x512 float slices against the "
      "host-device transfer floor measured in the same run, three slab ranges checked");
  ooc->add_option("--out", out, "JSON report file")->type_name("FILE");
  ooc->add_option("--gib", oc.gib, "volume size in GiB")->capture_default_str();
  ooc->add_option("--budget-mib", oc.budget_mib, "device budget in MiB (0: 80% of free)")
      ->capture_default_str();
  ooc->add_option("--zoom", oc.zoom,
                  "instead: out-of-core resampling, a cubic zoom by this factor along the slowest "
                  "axis (mirror), against the CPU zoom on a few slices")
      ->type_name("F");
  ooc->add_option("--rotate", oc.rotate,
                  "instead: out-of-core rotation by this many degrees (cubic, mirror, "
                  "scipy.ndimage.rotate's matrix, no reshape), against the CPU on a few slices")
      ->type_name("DEG");
  ooc->add_option("--axes", oc.axes, "the plane of --rotate: 1,2 (keeps each slice) or 0,2")
      ->check(CLI::IsMember({"1,2", "0,2", "0,1"}))
      ->capture_default_str();
  ooc->add_flag("--pinned", oc.pinned,
                "page-lock the volume first (cudaHostRegister, timed apart): no staging copies");

  cbench::FfdOptions fo;
  CLI::App* ffd = app.add_subcommand(
      "ffd",
      "dense cubic B-spline FFD fields at P4's four volume sizes and tiles 3^3..7^3: texture "
      "hardware, per-voxel and thread-per-tile (lerp, fma) kernels; ms, voxels/s, GFLOP/s, "
      "mean and max abs error against the double field, P4's published figures");
  ffd->add_option("--out,--json", out, "JSON report file")->type_name("FILE");
  ffd->add_flag("--quick", fo.quick, "one small volume, tile 5^3, few repeats");
  ffd->add_option("--only", fo.only, "only the volume whose name starts with this, e.g. 512x228")
      ->type_name("NAME");
  ffd->add_option("--tiles", fo.tiles, "cubic tile sizes (default 3 4 5 6 7)")
      ->check(CLI::Range(1, 8));
  ffd->add_option("--repeats", fo.repeats, "timed runs per kernel")->capture_default_str();
  ffd->add_option("--amplitude", fo.amplitude, "displacements uniform in [-A, A] voxels")
      ->capture_default_str();
  ffd->add_option("--seed", fo.seed, "seed of the random grids")->capture_default_str();

  cbench::RegistrationOptions ro;
  CLI::App* reg = app.add_subcommand(
      "registration",
      "FFD registration (SSD + bending energy, L-BFGS) on the MRI head and P4's volumes, with "
      "each field kernel and the CPU: ms per objective evaluation split by stage (field, warp, "
      "gradient, regulariser) and end to end per iteration (setup apart)");
  reg->add_option("--out,--json", out, "JSON report file")->type_name("FILE");
  reg->add_flag("--quick", ro.quick, "the head only, few repeats and iterations");
  reg->add_option("--only", ro.only, "only the volume whose name starts with this, e.g. head")
      ->type_name("NAME");
  reg->add_option("--repeats", ro.repeats, "timed evaluations per backend")->capture_default_str();
  reg->add_option("--iterations", ro.iterations, "optimiser iterations end to end")
      ->capture_default_str();
  reg->add_option("--spacing", ro.spacing, "control-point spacing (voxels, all axes)")
      ->check(CLI::Range(1, 8))
      ->capture_default_str();
  reg->add_flag("!--no-cpu", ro.cpu, "skip the CPU rows");
  reg->add_option("--assets", ro.asset_dir, "the folder holding mri_t1_head.nrrd")
      ->capture_default_str();
  reg->add_option("--seed", ro.seed, "seed of the synthetic volumes and fields")
      ->capture_default_str();

  cbench::BsplineOptions bo;
  CLI::App* bspline = app.add_subcommand(
      "bspline",
      "issue 17 at the sizes of the thesis 'Scalable GPU acceleration of b-spline signal "
      "processing operations': direct (lambda 0 and > 0), indirect, Laplacian, d/dx, "
      "interpolation and the practical pipeline, against a device-to-device copy, our CPU and "
      "the thesis's published figures");
  bspline->add_option("--out,--json", out, "JSON report file")->type_name("FILE");
  bspline->add_flag("--quick", bo.quick, "the smallest 2-D and 3-D sizes, few repeats");
  bspline->add_option("--only", bo.only, "only the size whose name starts with this")
      ->type_name("NAME");
  bspline->add_option("--repeats", bo.repeats, "timed GPU runs per operation")
      ->capture_default_str();
  bspline->add_flag("!--no-cpu", bo.cpu, "skip the CPU column");
  bspline->add_option("--seed", bo.seed, "seed of the random data")->capture_default_str();

  cbench::PyramidBenchOptions po;
  CLI::App* pyramid = app.add_subcommand(
      "pyramid",
      "issue 17's B-spline pyramid (reduce2, reduce by 0.71, expand2) at 15257x3736 and "
      "400x300x151, against a device-to-device copy and our CPU");
  pyramid->add_option("--out,--json", out, "JSON report file")->type_name("FILE");
  pyramid->add_flag("--quick", po.quick, "small sizes, few repeats");
  pyramid->add_option("--repeats", po.repeats, "timed GPU runs per operation")
      ->capture_default_str();
  pyramid->add_flag("!--no-cpu", po.cpu, "skip the CPU column");
  pyramid->add_option("--seed", po.seed, "seed of the random data")->capture_default_str();
  pyramid->add_option("--only", po.only, "one size only (15257x3736 or 400x300x151)")
      ->type_name("SIZE");
  pyramid
      ->add_option("--op", po.op,
                   "only the operations whose name contains this, e.g. 0.71 (and the copy)")
      ->type_name("TEXT");

  cbench::GrbfBenchOptions gb;
  CLI::App* grbf = app.add_subcommand(
      "grbf",
      "GRBF interpolation (issue 18) at the sizes of 'GRBF interpolation of 2-D and 3-D medical "
      "images with CUDA': solve and resampling on the GPU against the CPU, and the published "
      "blocked scheme");
  grbf->add_option("--out,--json", out, "JSON report file")->type_name("FILE");
  grbf->add_flag("--quick", gb.quick, "the 60x60 image only, few repeats");
  grbf->add_option("--repeats", gb.repeats, "timed runs per task")->capture_default_str();
  grbf->add_option("--assets", gb.asset_dir, "the folder holding ascent.png and the MRI")
      ->capture_default_str();
  grbf->add_option("--seed", gb.seed, "seed of the synthetic volume")->capture_default_str();

  CLI11_PARSE(app, argc, argv);
  try {
    sv::cuda::require("splinebench-cuda");
    cbench::Json report = prefilter->parsed()     ? cbench::run_prefilter(pf)
                          : reconstruct->parsed() ? cbench::run_reconstruct(rc)
                          : ooc->parsed()         ? cbench::run_out_of_core(oc)
                          : ffd->parsed()         ? cbench::run_ffd(fo)
                          : reg->parsed()         ? cbench::run_registration(ro)
                          : bspline->parsed()     ? cbench::run_bspline(bo)
                          : pyramid->parsed()     ? cbench::run_pyramid(po)
                          : grbf->parsed()        ? cbench::run_grbf(gb)
                                                  : cbench::run_upscale(up);
    if (!out.empty()) {
      std::ofstream f(out);
      f << report.dump(2) << "\n";
      if (!f) throw std::runtime_error("cannot write " + out);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "splinebench-cuda: %s\n", e.what());
    return 1;
  }
  return 0;
}
