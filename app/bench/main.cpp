// splinebench: the GL accuracy and speed study of the GLSL fetch family, headless (EGL).
// Subcommands: accuracy, table1, probe, rotation, speed (one file each). Each writes a JSON
// report to --out and prints a short Markdown table on stdout; progress goes to stderr.
// Exit status: 0 success, 1 the study failed (e.g. no GL context), 2 bad command line.
#include <cstdio>
#include <exception>
#include <string>

#include <CLI/CLI.hpp>

#include "bench.h"

namespace {

void add_common(CLI::App* sub, bench::Common& c, const std::string& name) {
  c.out = "splinebench-" + name + ".json";
  sub->add_option("--out", c.out, "JSON report file")->type_name("FILE")->capture_default_str();
  sub->add_option("--assets", c.assets, "folder with ascent.png and coffee.png (default: ./assets)")
      ->type_name("DIR");
  sub->add_flag("--quick", c.quick,
                "small sizes and few repeats (for software renderers such as Mesa llvmpipe)");
  sub->add_option("--seed", c.seed, "seed of the random data and positions")
      ->type_name("N")
      ->capture_default_str();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "splinebench: accuracy and speed of the GLSL B-spline fetches (nearest, linear, "
      "cubic-unfiltered, lut, otf, precise) in a headless EGL context.",
      "splinebench"};
  app.require_subcommand(1);

  bench::AccuracyOptions acc;
  CLI::App* accuracy = app.add_subcommand(
      "accuracy",
      "max abs / RMS error of every flavour and format against the CPU double "
      "reference, 2-D and 3-D, every boundary mode for the prefiltered flavours");
  add_common(accuracy, acc.common, "accuracy");
  accuracy
      ->add_option("--positions", acc.positions, "positions per case (default 2^18, quick 2^14)")
      ->type_name("M");

  bench::Table1Options t1;
  CLI::App* table1 = app.add_subcommand(
      "table1",
      "Table 1 of Ruijters et al.: SSE over a 256x256 magnification and time per frame, "
      "LUT vs OTF vs precise");
  add_common(table1, t1.common, "table1");
  table1->add_option("--repeats", t1.repeats, "timed frames (default 200, quick 10)")
      ->type_name("N");

  bench::ProbeOptions pr;
  CLI::App* probe =
      app.add_subcommand("probe",
                         "filtering precision: weight levels of hardware linear filtering, and the "
                         "0..1/65535 ramp in R16, R16F and R32F (Figure 3)");
  add_common(probe, pr.common, "probe");
  probe->add_option("--steps", pr.steps, "ramp positions between the two texel centres")
      ->type_name("N")
      ->check(CLI::Range(2, 1 << 20))
      ->capture_default_str();

  bench::RotationOptions rot;
  CLI::App* rotation = app.add_subcommand(
      "rotation",
      "repeated rotation of ascent through the GL fetches, against the original and "
      "the CPU double result");
  add_common(rotation, rot.common, "rotation");
  rotation->add_option("--steps", rot.steps, "rotations")->type_name("K")->capture_default_str();
  rotation->add_option("--degrees", rot.degrees, "degrees per rotation")
      ->type_name("DEG")
      ->capture_default_str();

  bench::SpeedOptions sp;
  CLI::App* speed = app.add_subcommand(
      "speed",
      "GPU ms per frame: 2-D zoom 1920x1080 -> 3840x2160 and oblique 2048^2 slices of a "
      "256^3 volume, every flavour, R32F and R16F, ratio to linear");
  add_common(speed, sp.common, "speed");
  speed->add_option("--repeats", sp.repeats, "timed frames after warm-up (default 50, quick 10)")
      ->type_name("N");
  speed->add_option("--only", sp.only,
                    "only the workloads whose name starts with this (zoom2d, "
                    "oblique3d)");
  speed->add_option("--formats", sp.formats, "texture formats (default r32f r16f)");
  speed->add_option("--fetches", sp.fetches, "flavours (default all)");
  speed->add_option("--exp", sp.exps,
                    "experiment: time every flavour under each of these SPLINEVIEW_GL_EXP values "
                    "(\"base\" = none)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  try {
    bench::Json report;
    const bench::Common* common = nullptr;
    if (accuracy->parsed()) report = bench::run_accuracy(acc), common = &acc.common;
    if (table1->parsed()) report = bench::run_table1(t1), common = &t1.common;
    if (probe->parsed()) report = bench::run_probe(pr), common = &pr.common;
    if (rotation->parsed()) report = bench::run_rotation(rot), common = &rot.common;
    if (speed->parsed()) report = bench::run_speed(sp), common = &sp.common;
    if (common) {
      bench::write_report(report, *common);
      std::fprintf(stderr, "splinebench: wrote %s\n", common->out.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "splinebench: %s\n", e.what());
    return 1;
  }
  return 0;
}
