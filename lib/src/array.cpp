// Names and parsing for the small enums of array.h, and shape descriptions for messages.
#include "splineview/array.h"

namespace sv {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::U8:
      return "uint8";
    case DType::U16:
      return "uint16";
    case DType::F32:
      return "float32";
    case DType::F64:
      return "float64";
    case DType::Bool:
      return "bool";
    case DType::I8:
      return "int8";
    case DType::I16:
      return "int16";
    case DType::I32:
      return "int32";
    case DType::I64:
      return "int64";
    case DType::U32:
      return "uint32";
    case DType::U64:
      return "uint64";
    case DType::F16:
      return "float16";
  }
  return "?";
}

double dtype_full_scale(DType t) {
  switch (t) {
    case DType::U8:
      return 255.0;
    case DType::U16:
      return 65535.0;
    case DType::I8:
      return 127.0;
    case DType::I16:
      return 32767.0;
    case DType::I32:
      return 2147483647.0;
    case DType::U32:
      return 4294967295.0;
    case DType::I64:
      return 9223372036854775807.0;
    case DType::U64:
      return 18446744073709551615.0;
    case DType::Bool:
    case DType::F16:
    case DType::F32:
    case DType::F64:
      return 1.0;
  }
  return 1.0;
}

bool dtype_is_integer(DType t) {
  return t != DType::F16 && t != DType::F32 && t != DType::F64;
}

const char* boundary_name(Boundary b) {
  switch (b) {
    case Boundary::Reflect:
      return "reflect";
    case Boundary::Mirror:
      return "mirror";
    case Boundary::Periodic:
      return "periodic";
    case Boundary::Wrap:
      return "wrap";
    case Boundary::Nearest:
      return "nearest";
    case Boundary::Constant:
      return "constant";
    case Boundary::GridConstant:
      return "grid-constant";
  }
  return "?";
}

const char* boundary_scipy_name(Boundary b) {
  return b == Boundary::Periodic ? "grid-wrap" : boundary_name(b);
}

Boundary parse_boundary(const std::string& s) {
  if (s == "reflect" || s == "grid-mirror") return Boundary::Reflect;
  if (s == "mirror") return Boundary::Mirror;
  if (s == "periodic" || s == "grid-wrap") return Boundary::Periodic;
  if (s == "wrap") return Boundary::Wrap;
  if (s == "nearest") return Boundary::Nearest;
  if (s == "constant") return Boundary::Constant;
  if (s == "grid-constant") return Boundary::GridConstant;
  throw Error("unknown boundary mode '" + s +
              "' (expected reflect, grid-mirror, mirror, periodic, grid-wrap, wrap, nearest, "
              "constant or grid-constant)");
}

bool boundary_on_gpu(Boundary b) {
  return b == Boundary::Reflect || b == Boundary::Mirror || b == Boundary::Periodic;
}

std::string describe_shape(const std::vector<std::size_t>& dims, std::size_t channels) {
  std::string s;
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  if (channels > 1) s += " (" + std::to_string(channels) + " channels)";
  return s;
}

}  // namespace sv
