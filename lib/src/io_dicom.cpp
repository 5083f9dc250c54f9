// DICOM read through GDCM (libgdcm-dev): a single file (one slice, or a multi-frame file) or a
// folder holding one series. See splineview/io.h (load_dicom) for what is read and refused.
//
// Why GDCM: it decodes every common transfer syntax (uncompressed, deflate, RLE, JPEG baseline
// and lossless, JPEG-LS, JPEG 2000) in one Debian package with a C++ API that reads a file up
// to a tag (headers of a whole series without their pixel data) and never exits or prints
// when its trace is off. DCMTK needs a decoder registration per codec family and prints
// through its own logger.
//
// Geometry: DICOM states positions in the patient's LPS+ frame; the affine is built in LPS and
// converted with sv::flip_ras_lps. ImageOrientationPatient (IOP) holds the row direction (the
// direction of increasing column index = our i) then the column direction (our j);
// PixelSpacing holds the spacing between rows (along j) then between columns (along i).
// Slices are sorted by the projection of ImagePositionPatient (IPP) on the normal row x col.
#include <gdcmAttribute.h>
#include <gdcmDataSet.h>
#include <gdcmDicts.h>
#include <gdcmGlobal.h>
#include <gdcmImage.h>
#include <gdcmImageReader.h>
#include <gdcmReader.h>
#include <gdcmSequenceOfFragments.h>
#include <gdcmSequenceOfItems.h>
#include <gdcmTrace.h>
#include <gdcmTransferSyntax.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "io_common.h"
#include "isolate.h"
#include "splineview/io.h"
#include "splineview/text.h"

namespace sv {

namespace {

namespace fs = std::filesystem;

using io::fail;

constexpr std::size_t kMaxFolderEntries = 100000;

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// GDCM reports through gdcm::Trace, process-wide: while a load runs (one at a time, under
// gdcm_mutex) its warnings and errors go to `log` instead of stderr, so that a reason can be
// quoted ("Incomplete Pixel Data found" is only a warning to GDCM: here it refuses the file).
std::mutex& gdcm_mutex() {
  static std::mutex m;
  return m;
}

class GdcmLog {
 public:
  GdcmLog() {
    gdcm::Trace::SetDebug(false);
    gdcm::Trace::SetWarningStream(log_);
    gdcm::Trace::SetErrorStream(log_);
    gdcm::Trace::SetWarning(true);
    gdcm::Trace::SetError(true);
  }
  ~GdcmLog() {
    gdcm::Trace::SetWarning(false);
    gdcm::Trace::SetError(false);
    gdcm::Trace::SetWarningStream(sink());
    gdcm::Trace::SetErrorStream(sink());
  }
  GdcmLog(const GdcmLog&) = delete;
  GdcmLog& operator=(const GdcmLog&) = delete;

  void clear() { log_.str(""); }
  bool contains(const char* what) const { return log_.str().find(what) != std::string::npos; }
  // The last message GDCM gave (its text, without the "Warning: In FILE, line N" line), or "".
  std::string reason() const {
    const std::string all = log_.str();
    std::string last;
    std::size_t start = 0;
    while (start < all.size()) {
      std::size_t end = all.find('\n', start);
      if (end == std::string::npos) end = all.size();
      const std::string line = all.substr(start, end - start);
      if (!line.empty() && line.rfind("Warning:", 0) != 0 && line.rfind("Error:", 0) != 0 &&
          line.rfind("Debug:", 0) != 0)
        last = line;
      start = end + 1;
    }
    return last.empty() ? "" : " (GDCM: " + printable(last, 120) + ")";
  }

 private:
  static std::ostream& sink() {
    static std::ostringstream s;  // flags are off whenever this is the stream
    return s;
  }
  std::ostringstream log_;
};

GdcmLog* g_log = nullptr;  // the current load's log (under gdcm_mutex)

std::string gdcm_reason() {
  return g_log ? g_log->reason() : "";
}

// The guard of splineview/input.h, then regular files only: GDCM opens the path itself and
// reads as far as the file goes, which must not be a pipe or a device.
void check_regular(const std::string& path) {
  check_input(path);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    fail(path, "DICOM is read from regular files only");
}

// ---- structure check ---------------------------------------------------------------------
//
// Debian's GDCM is built with assertions: a truncated element ("Should not happen") aborts the
// process. So every file is walked here first, element by element (file meta information,
// then the data set in its transfer syntax, into sequences, items and encapsulated fragments),
// and handed to GDCM only when every element lies within the file.

struct Walker {
  const std::string& path;
  const unsigned char* d;
  std::size_t size;
  bool part10;  // the file has the "DICM" marker

  [[noreturn]] void bad(std::size_t pos, const std::string& what) const {
    fail(path, std::string(part10 ? "damaged DICOM: " : "not a DICOM file, or a damaged one: ") +
                   what + " at byte " + std::to_string(pos));
  }
  std::uint16_t u16(std::size_t pos) const { return std::uint16_t(d[pos] | (d[pos + 1] << 8)); }
  std::uint32_t u32(std::size_t pos) const {
    return std::uint32_t(d[pos]) | (std::uint32_t(d[pos + 1]) << 8) |
           (std::uint32_t(d[pos + 2]) << 16) | (std::uint32_t(d[pos + 3]) << 24);
  }
  static bool long_vr(const unsigned char* vr) {
    static const char* const kLong[] = {"OB", "OD", "OF", "OL", "OV", "OW", "SQ",
                                        "SV", "UC", "UN", "UR", "UT", "UV"};
    for (const char* l : kLong)
      if (vr[0] == l[0] && vr[1] == l[1]) return true;
    return false;
  }
  // One of the value representations of PS3.5 (GDCM asserts on any other).
  static bool is_vr(const unsigned char* vr) {
    static const char* const kAll[] = {"AE", "AS", "AT", "CS", "DA", "DS", "DT", "FD", "FL",
                                       "IS", "LO", "LT", "OB", "OD", "OF", "OL", "OV", "OW",
                                       "PN", "SH", "SL", "SQ", "SS", "ST", "SV", "TM", "UC",
                                       "UI", "UL", "UN", "UR", "US", "UT", "UV"};
    for (const char* v : kAll)
      if (vr[0] == v[0] && vr[1] == v[1]) return true;
    return false;
  }

  // Items of a sequence (or fragments when `fragments`) from `pos`; `end` = the sequence's end
  // for a defined length, else SIZE_MAX (then a sequence delimiter ends it). Returns the end.
  std::size_t items(std::size_t pos, std::size_t end, bool explicit_vr, bool fragments,
                    int depth) const {
    const bool undefined = end == SIZE_MAX;
    const std::size_t limit = undefined ? size : end;
    while (pos < limit || undefined) {
      if (pos + 8 > limit) bad(pos, "truncated sequence");
      const std::uint16_t g = u16(pos), e = u16(pos + 2);
      const std::uint32_t len = u32(pos + 4);
      pos += 8;
      if (g == 0xfffe && e == 0xe0dd) {
        if (!undefined) bad(pos - 8, "sequence delimiter in a sequence of defined length");
        if (len != 0) bad(pos - 8, "sequence delimiter with a non-zero length");
        return pos;
      }
      if (g != 0xfffe || e != 0xe000) bad(pos - 8, "expected an item");
      if (len == 0xffffffffu) {
        if (fragments) bad(pos - 8, "fragment of undefined length");
        pos = dataset(pos, SIZE_MAX, explicit_vr, depth + 1);
      } else {
        if (len > limit - pos) bad(pos - 8, "item longer than the file");
        if (!fragments) dataset(pos, pos + len, explicit_vr, depth + 1);
        pos += len;
      }
    }
    return pos;
  }

  // Elements from `pos` to `end` (SIZE_MAX: until an item delimiter). Returns the end.
  std::size_t dataset(std::size_t pos, std::size_t end, bool explicit_vr, int depth) const {
    if (depth > 32) bad(pos, "sequences nested too deeply");
    const bool undefined = end == SIZE_MAX;
    const std::size_t limit = undefined ? size : end;
    while (pos < limit || undefined) {
      if (pos + 8 > limit) bad(pos, undefined ? "truncated item" : "truncated element");
      const std::uint16_t g = u16(pos), e = u16(pos + 2);
      if (g == 0xfffe && e == 0xe00d) {
        if (!undefined) bad(pos, "item delimiter in an item of defined length");
        if (u32(pos + 4) != 0) bad(pos, "item delimiter with a non-zero length");
        return pos + 8;
      }
      if (g == 0xfffe) bad(pos, "item or delimiter tag outside a sequence");
      if (g == 0x7fe0 && e == 0x0010 && depth > 0) bad(pos, "pixel data inside a sequence");
      const std::size_t start = pos;
      bool sq = false, ob = false;
      std::uint32_t len;
      if (explicit_vr && g != 0xfffe) {
        const unsigned char* vr = d + pos + 4;
        if (!is_vr(vr)) bad(pos, "bad value representation");
        if (long_vr(vr)) {
          if (pos + 12 > limit) bad(pos, "truncated element");
          len = u32(pos + 8);
          pos += 12;
        } else {
          len = u16(pos + 6);
          pos += 8;
        }
        sq = vr[0] == 'S' && vr[1] == 'Q';
        ob = (vr[0] == 'O' && (vr[1] == 'B' || vr[1] == 'W')) || (vr[0] == 'U' && vr[1] == 'N');
      } else {
        len = u32(pos + 4);
        pos += 8;
      }
      if (len == 0xffffffffu) {
        const bool pixel = g == 0x7fe0 && e == 0x0010;
        if (pixel) {
          pos = items(pos, SIZE_MAX, explicit_vr, true, depth);
        } else if (sq || !explicit_vr) {
          pos = items(pos, SIZE_MAX, explicit_vr, false, depth);
        } else if (ob) {  // UN of undefined length: implicit VR inside
          pos = items(pos, SIZE_MAX, false, false, depth);
        } else {
          bad(start, "undefined length on a plain element");
        }
      } else {
        if (len > limit - pos) bad(start, "element longer than the file");
        // Implicit VR (or UN) values that start with an item tag are sequences, as GDCM reads
        // them.
        const bool looks_sq = (!explicit_vr || ob) && len >= 8 && u16(pos) == 0xfffe &&
                              u16(pos + 2) == 0xe000 && !(g == 0x7fe0 && e == 0x0010);
        if (sq || looks_sq) items(pos, pos + len, sq ? explicit_vr : false, false, depth);
        pos += len;
      }
    }
    return pos;
  }
};

// Checks the structure of `bytes` (see above); refuses big-endian and deflated data sets.
void check_structure(const std::string& path, const std::vector<unsigned char>& bytes) {
  const bool part10 = bytes.size() >= 132 && std::memcmp(bytes.data() + 128, "DICM", 4) == 0;
  const Walker w{path, bytes.data(), bytes.size(), part10};
  std::size_t pos = 0;
  std::string ts;
  bool explicit_vr = false;
  if (part10) {
    pos = 132;
    // File meta information: explicit VR little endian, group 0002.
    std::size_t meta_end = 0;  // where (0002,0000) FileMetaInformationGroupLength says it ends
    while (pos + 8 <= bytes.size() && w.u16(pos) == 0x0002) {
      const std::uint16_t e = w.u16(pos + 2);
      const unsigned char* vr = bytes.data() + pos + 4;
      if (!Walker::is_vr(vr)) w.bad(pos, "bad value representation in the file meta information");
      std::size_t len, head;
      if (Walker::long_vr(vr)) {
        if (pos + 12 > bytes.size()) w.bad(pos, "truncated element");
        len = w.u32(pos + 8);
        head = 12;
      } else {
        len = w.u16(pos + 6);
        head = 8;
      }
      // GDCM 3.0.21 aborts (an assertion) on a sequence or an undefined length in group 0002
      // (found by fuzz_dicom); the standard has neither there.
      if (std::memcmp(vr, "SQ", 2) == 0 || len == 0xFFFFFFFFu)
        w.bad(pos, "a sequence or an undefined length in the file meta information");
      if (len > bytes.size() - pos - head) w.bad(pos, "element longer than the file");
      if (e == 0x0010) ts.assign(reinterpret_cast<const char*>(bytes.data() + pos + head), len);
      if (e == 0x0000 && len == 4) meta_end = pos + head + len + w.u32(pos + head);
      pos += head + len;
    }
    // GDCM reads the group as far as its length says and asserts when that is not where the
    // elements end (fuzz_dicom).
    if (meta_end != 0 && meta_end != pos)
      w.bad(pos, "the file meta information's group length does not match its elements");
    // Fewer than 8 bytes after the last whole element: a cut element, on which GDCM asserts
    // (fuzz_dicom).
    if (pos < bytes.size() && bytes.size() - pos < 8) w.bad(pos, "truncated element");
    while (!ts.empty() && (ts.back() == '\0' || ts.back() == ' ')) ts.pop_back();
    if (ts.empty()) fail(path, "damaged DICOM: no transfer syntax in the file meta information");
    if (ts == "1.2.840.10008.1.2.2")
      fail(path, "the retired Explicit VR Big Endian transfer syntax is not supported");
    if (ts == "1.2.840.10008.1.2.1.99")
      fail(path, "the Deflated Explicit VR Little Endian transfer syntax is not supported");
    explicit_vr = ts != "1.2.840.10008.1.2";
  } else {
    // No Part 10 header: an implicit or explicit VR little-endian data set from byte 0.
    if (bytes.size() < 8) fail(path, "not a DICOM file (too short)");
    // File meta information (group 0002) belongs after the 128-byte preamble and "DICM"; GDCM
    // asserts on some forms of it without them (fuzz_dicom).
    if (w.u16(0) == 0x0002)
      fail(path,
           "damaged DICOM: file meta information (group 0002) without the 128-byte "
           "preamble and the DICM marker");
    explicit_vr = Walker::is_vr(bytes.data() + 4);
  }
  w.dataset(pos, bytes.size(), explicit_vr, 0);
}

// Reads `path` (the input guard, regular files only), checks its structure and returns its
// bytes for GDCM.
std::string read_checked(const std::string& path) {
  check_regular(path);
  const std::vector<unsigned char> bytes = io::read_file(path);
  check_structure(path, bytes);
  return std::string(bytes.begin(), bytes.end());
}

// ---- reading attributes ------------------------------------------------------------------

const gdcm::DataElement* element(const gdcm::DataSet& ds, const gdcm::Tag& t) {
  if (!ds.FindDataElement(t)) return nullptr;
  const gdcm::DataElement& de = ds.GetDataElement(t);
  if (de.IsEmpty()) return nullptr;
  return &de;
}

// The text of a string-valued element without its padding (trailing spaces and NULs); "" when
// absent.
std::string text(const gdcm::DataSet& ds, const gdcm::Tag& t) {
  const gdcm::DataElement* de = element(ds, t);
  if (!de) return "";
  const gdcm::ByteValue* bv = de->GetByteValue();
  if (!bv || !bv->GetPointer()) return "";
  std::string s(bv->GetPointer(), bv->GetLength());
  while (!s.empty() && (s.back() == ' ' || s.back() == '\0')) s.pop_back();
  std::size_t b = 0;
  while (b < s.size() && s[b] == ' ') ++b;
  return s.substr(b);
}

std::string tag_name(const gdcm::Tag& t) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "(%04X,%04X)", t.GetGroup(), t.GetElement());
  return buf;
}

// A decimal-string (DS) or integer-string (IS) element: its backslash-separated numbers, every
// one finite; empty when the element is absent. A malformed value is an error naming it.
std::vector<double> numbers(const std::string& path, const gdcm::DataSet& ds, const gdcm::Tag& t,
                            const char* name) {
  const std::string s = text(ds, t);
  std::vector<double> out;
  if (s.empty()) return out;
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t end = s.find('\\', start);
    if (end == std::string::npos) end = s.size();
    std::size_t b = start, e = end;
    while (b < e && (s[b] == ' ' || s[b] == '\0')) ++b;
    while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\0')) --e;
    if (b < e && s[b] == '+') ++b;
    double v = 0;
    const auto r = std::from_chars(s.data() + b, s.data() + e, v);
    if (b == e || r.ec != std::errc() || r.ptr != s.data() + e || !std::isfinite(v))
      fail(path, std::string("bad ") + name + " " + tag_name(t) + " " + io::quote(s));
    out.push_back(v);
    if (out.size() > 64) fail(path, std::string("bad ") + name + ": too many values");
    start = end + 1;
  }
  return out;
}

// An unsigned short (US) element of a little-endian data set; `fallback` when absent.
unsigned us_value(const std::string& path, const gdcm::DataSet& ds, const gdcm::Tag& t,
                  const char* name, unsigned fallback) {
  const gdcm::DataElement* de = element(ds, t);
  if (!de) return fallback;
  const gdcm::ByteValue* bv = de->GetByteValue();
  if (!bv || bv->GetLength() < 2 || !bv->GetPointer())
    fail(path, std::string("bad ") + name + " " + tag_name(t));
  const auto* p = reinterpret_cast<const unsigned char*>(bv->GetPointer());
  return unsigned(p[0]) | (unsigned(p[1]) << 8);
}

// The data set of the first item of sequence `t` in `ds`, or nullptr.
const gdcm::DataSet* first_item(const gdcm::DataSet& ds, const gdcm::Tag& t,
                                gdcm::SmartPointer<gdcm::SequenceOfItems>* keep) {
  const gdcm::DataElement* de = element(ds, t);
  if (!de) return nullptr;
  *keep = de->GetValueAsSQ();
  if (!*keep || (*keep)->GetNumberOfItems() < 1) return nullptr;
  return &(*keep)->GetItem(1).GetNestedDataSet();
}

const gdcm::Tag kPixelData(0x7fe0, 0x0010);
const gdcm::Tag kRows(0x0028, 0x0010), kColumns(0x0028, 0x0011);
const gdcm::Tag kSamples(0x0028, 0x0002), kPhotometric(0x0028, 0x0004);
const gdcm::Tag kBitsAllocated(0x0028, 0x0100), kBitsStored(0x0028, 0x0101);
const gdcm::Tag kHighBit(0x0028, 0x0102), kPixelRepresentation(0x0028, 0x0103);
const gdcm::Tag kPlanar(0x0028, 0x0006), kFrames(0x0028, 0x0008);
const gdcm::Tag kSeriesUid(0x0020, 0x000e);
const gdcm::Tag kIpp(0x0020, 0x0032), kIop(0x0020, 0x0037);
const gdcm::Tag kPixelSpacing(0x0028, 0x0030), kSliceThickness(0x0018, 0x0050);
const gdcm::Tag kSpacingBetween(0x0018, 0x0088);
const gdcm::Tag kIntercept(0x0028, 0x1052), kSlope(0x0028, 0x1053);
const gdcm::Tag kGridFrameOffset(0x3004, 0x000c);
const gdcm::Tag kSharedGroups(0x5200, 0x9229), kPerFrameGroups(0x5200, 0x9230);
const gdcm::Tag kPlanePositionSeq(0x0020, 0x9113), kPlaneOrientationSeq(0x0020, 0x9116);
const gdcm::Tag kPixelMeasuresSeq(0x0028, 0x9110), kPixelValueTransformSeq(0x0028, 0x9145);

// ---- value representations ---------------------------------------------------------------
//
// GDCM asserts (aborts) when an element it reads through gdcm::Attribute has a value
// representation incompatible with the dictionary's (e.g. Rows stored as DS) or a binary value
// of a length that is not a multiple of its size. Every public element of the header is
// checked against the dictionary first, sequences included.

void check_vrs(const std::string& path, const gdcm::DataSet& ds, int depth) {
  if (depth > 32) fail(path, "damaged DICOM: sequences nested too deeply");
  const gdcm::Dicts& dicts = gdcm::Global::GetInstance().GetDicts();
  for (const gdcm::DataElement& de : ds.GetDES()) {
    const gdcm::Tag& t = de.GetTag();
    if (t.IsPrivate() || t.GetElement() == 0) continue;
    const gdcm::VR dict_vr = dicts.GetDictEntry(t).GetVR();
    const gdcm::VR vr = de.GetVR();
    if (vr != gdcm::VR::INVALID && dict_vr != gdcm::VR::INVALID && !dict_vr.Compatible(vr))
      fail(path, "damaged DICOM: element " + tag_name(t) + " has value representation " +
                     gdcm::VR::GetVRString(vr) + ", expected " + gdcm::VR::GetVRString(dict_vr));
    const gdcm::VR effective = vr == gdcm::VR::INVALID || vr == gdcm::VR::UN ? dict_vr : vr;
    const gdcm::ByteValue* bv = de.GetByteValue();
    if (bv && !(t.GetGroup() == 0x7fe0)) {
      unsigned size = 0;
      if (effective == gdcm::VR::US || effective == gdcm::VR::SS) size = 2;
      if (effective == gdcm::VR::UL || effective == gdcm::VR::SL || effective == gdcm::VR::FL)
        size = 4;
      if (effective == gdcm::VR::FD) size = 8;
      if (size && bv->GetLength() % size != 0)
        fail(path, "damaged DICOM: element " + tag_name(t) + " holds " +
                       std::to_string(bv->GetLength()) + " bytes, not a multiple of " +
                       std::to_string(size));
    }
    if (effective == gdcm::VR::SQ && !de.IsEmpty()) {
      const gdcm::SmartPointer<gdcm::SequenceOfItems> sq = de.GetValueAsSQ();
      if (sq)
        for (gdcm::SequenceOfItems::SizeType i = 1; i <= sq->GetNumberOfItems(); ++i)
          check_vrs(path, sq->GetItem(i).GetNestedDataSet(), depth + 1);
    }
  }
}

// ---- headers -----------------------------------------------------------------------------

struct Slice {
  std::size_t file = 0;   // index into the headers
  std::size_t frame = 0;  // frame within that file
  bool has_ipp = false;
  Vec3 ipp{};  // LPS mm
  double slope = 1, intercept = 0;
  double along = 0;  // projection of ipp on the normal
};

struct Header {
  std::string path;
  std::string series;
  unsigned rows = 0, cols = 0, samples = 1, bits_allocated = 0, bits_stored = 0, high_bit = 0,
           pixel_representation = 0;
  std::size_t frames = 1;
  std::string photometric;
  bool has_iop = false;
  std::array<double, 6> iop{};
  bool has_spacing = false;
  double row_spacing = 1, col_spacing = 1;  // PixelSpacing[0] (along j), [1] (along i)
  double thickness = 0;                     // SliceThickness, else SpacingBetweenSlices, else 0
  std::vector<Slice> slices;                // one per frame
  // What the file can hold: its size, and the most decoded samples one byte of it can give in
  // its transfer syntax (samples_per_byte).
  std::size_t file_bytes = 0;
  double samples_per_byte = 0;
};

// The most samples one byte of pixel data can decode to, by transfer syntax: native data
// 1 / bytes per sample; deflate 1032 bytes per byte (zlib's limit); RLE 64 bytes per byte (a
// PackBits run: 2 bytes give 128); the JPEG processes 64 samples (Huffman coding spends at
// least 1 bit per lossless sample and 2 bits per 8x8 DCT block); JPEG-LS and JPEG 2000, whose
// run modes and empty code blocks compress a constant image without a practical limit, 2^18
// (a run of 2^15 samples per bit).
double samples_per_byte(const gdcm::TransferSyntax& ts, unsigned bytes_per_sample) {
  const double b = bytes_per_sample == 0 ? 1 : bytes_per_sample;
  switch (static_cast<gdcm::TransferSyntax::TSType>(ts)) {
    case gdcm::TransferSyntax::ImplicitVRLittleEndian:
    case gdcm::TransferSyntax::ExplicitVRLittleEndian:
      return 1 / b;
    case gdcm::TransferSyntax::DeflatedExplicitVRLittleEndian:
      return 1032 / b;
    case gdcm::TransferSyntax::RLELossless:
      return 64 / b;
    case gdcm::TransferSyntax::JPEGBaselineProcess1:
    case gdcm::TransferSyntax::JPEGExtendedProcess2_4:
    case gdcm::TransferSyntax::JPEGLosslessProcess14:
    case gdcm::TransferSyntax::JPEGLosslessProcess14_1:
      return 64;
    default:
      return 262144;
  }
}

// The geometry attributes of one frame, looked up in the frame's functional groups, then the
// shared ones, then the top level (the order of the Enhanced multi-frame IODs).
struct FrameAttrs {
  std::vector<double> ipp, iop, spacing, thickness, slope, intercept;
};

void read_attrs(const std::string& path, const gdcm::DataSet& ds, FrameAttrs* a) {
  gdcm::SmartPointer<gdcm::SequenceOfItems> keep;
  if (a->ipp.empty())
    if (const gdcm::DataSet* s = first_item(ds, kPlanePositionSeq, &keep))
      a->ipp = numbers(path, *s, kIpp, "ImagePositionPatient");
  if (a->iop.empty())
    if (const gdcm::DataSet* s = first_item(ds, kPlaneOrientationSeq, &keep))
      a->iop = numbers(path, *s, kIop, "ImageOrientationPatient");
  if (const gdcm::DataSet* s = first_item(ds, kPixelMeasuresSeq, &keep)) {
    if (a->spacing.empty()) a->spacing = numbers(path, *s, kPixelSpacing, "PixelSpacing");
    if (a->thickness.empty()) a->thickness = numbers(path, *s, kSliceThickness, "SliceThickness");
  }
  if (const gdcm::DataSet* s = first_item(ds, kPixelValueTransformSeq, &keep)) {
    if (a->slope.empty()) a->slope = numbers(path, *s, kSlope, "RescaleSlope");
    if (a->intercept.empty()) a->intercept = numbers(path, *s, kIntercept, "RescaleIntercept");
  }
}

void read_top_attrs(const std::string& path, const gdcm::DataSet& ds, FrameAttrs* a) {
  if (a->ipp.empty()) a->ipp = numbers(path, ds, kIpp, "ImagePositionPatient");
  if (a->iop.empty()) a->iop = numbers(path, ds, kIop, "ImageOrientationPatient");
  if (a->spacing.empty()) a->spacing = numbers(path, ds, kPixelSpacing, "PixelSpacing");
  if (a->thickness.empty()) a->thickness = numbers(path, ds, kSliceThickness, "SliceThickness");
  if (a->thickness.empty())
    a->thickness = numbers(path, ds, kSpacingBetween, "SpacingBetweenSlices");
  if (a->slope.empty()) a->slope = numbers(path, ds, kSlope, "RescaleSlope");
  if (a->intercept.empty()) a->intercept = numbers(path, ds, kIntercept, "RescaleIntercept");
}

bool close6(const std::array<double, 6>& a, const std::vector<double>& b) {
  for (int i = 0; i < 6; ++i)
    if (std::fabs(a[i] - b[i]) > 1e-4) return false;
  return true;
}

// Reads the header of `path` (everything before the pixel data). Returns false for a file that
// is DICOM but holds no image (no Rows: a DICOMDIR, a structured report, ...).
bool read_header(const std::string& path, Header* h) {
  io::isolation_ping();
  std::size_t file_bytes = 0;
  std::istringstream in = [&] {
    const std::string bytes = read_checked(path);
    file_bytes = bytes.size();
    return std::istringstream(bytes);
  }();
  gdcm::Reader reader;
  reader.SetStream(in);
  std::set<gdcm::Tag> skip;
  if (g_log) g_log->clear();
  if (!reader.ReadUpToTag(kPixelData, skip))
    fail(path, "not a DICOM file, or a damaged one" + gdcm_reason());
  const gdcm::TransferSyntax& ts = reader.GetFile().GetHeader().GetDataSetTransferSyntax();
  const gdcm::DataSet& ds = reader.GetFile().GetDataSet();
  check_vrs(path, ds, 0);
  if (!element(ds, kRows)) return false;
  if (ts.GetSwapCode() == gdcm::SwapCode::BigEndian)
    fail(path, "the retired Explicit VR Big Endian transfer syntax is not supported");
  h->path = path;
  h->series = text(ds, kSeriesUid);
  h->rows = us_value(path, ds, kRows, "Rows", 0);
  h->cols = us_value(path, ds, kColumns, "Columns", 0);
  h->samples = us_value(path, ds, kSamples, "SamplesPerPixel", 1);
  h->bits_allocated = us_value(path, ds, kBitsAllocated, "BitsAllocated", 0);
  h->bits_stored = us_value(path, ds, kBitsStored, "BitsStored", h->bits_allocated);
  h->high_bit = us_value(path, ds, kHighBit, "HighBit", h->bits_stored - 1);
  h->pixel_representation = us_value(path, ds, kPixelRepresentation, "PixelRepresentation", 0);
  h->photometric = text(ds, kPhotometric);
  h->file_bytes = file_bytes;
  h->samples_per_byte = samples_per_byte(ts, h->bits_allocated / 8);
  if (h->rows == 0 || h->cols == 0)
    fail(path, "the image has no pixels (Rows " + std::to_string(h->rows) + ", Columns " +
                   std::to_string(h->cols) + ")");
  if (h->samples != 1 && h->samples != 3)
    fail(path, "SamplesPerPixel " + std::to_string(h->samples) + " is not supported (1 or 3)");
  // GDCM asserts on any other value (fuzz_dicom).
  if (const unsigned pc = us_value(path, ds, kPlanar, "PlanarConfiguration", 0); pc > 1)
    fail(path, "bad PlanarConfiguration " + std::to_string(pc) + " (expected 0 or 1)");
  if (h->bits_allocated != 8 && h->bits_allocated != 16 && h->bits_allocated != 32)
    fail(path,
         "BitsAllocated " + std::to_string(h->bits_allocated) + " is not supported (8, 16 or 32)");
  if (h->bits_stored == 0 || h->bits_stored > h->bits_allocated ||
      h->high_bit >= h->bits_allocated || h->high_bit + 1 < h->bits_stored)
    fail(path, "inconsistent BitsStored " + std::to_string(h->bits_stored) + " / HighBit " +
                   std::to_string(h->high_bit) + " for BitsAllocated " +
                   std::to_string(h->bits_allocated));
  if (h->pixel_representation > 1)
    fail(path, "bad PixelRepresentation " + std::to_string(h->pixel_representation));
  const std::vector<double> frames = numbers(path, ds, kFrames, "NumberOfFrames");
  if (!frames.empty()) {
    if (frames.size() != 1 || frames[0] < 1 || frames[0] > 1e7 ||
        frames[0] != std::floor(frames[0]))
      fail(path, "bad NumberOfFrames " + io::quote(text(ds, kFrames)));
    h->frames = static_cast<std::size_t>(frames[0]);
  }

  // Geometry and rescale, per frame.
  FrameAttrs shared;
  gdcm::SmartPointer<gdcm::SequenceOfItems> shared_keep;
  if (const gdcm::DataSet* s = first_item(ds, kSharedGroups, &shared_keep))
    read_attrs(path, *s, &shared);
  read_top_attrs(path, ds, &shared);

  gdcm::SmartPointer<gdcm::SequenceOfItems> per_frame;
  if (const gdcm::DataElement* de = element(ds, kPerFrameGroups)) {
    per_frame = de->GetValueAsSQ();
    if (!per_frame || per_frame->GetNumberOfItems() != h->frames)
      fail(path, "the per-frame functional groups hold " +
                     std::to_string(per_frame ? per_frame->GetNumberOfItems() : 0) + " items for " +
                     std::to_string(h->frames) + " frames");
  }
  const std::vector<double> grid = numbers(path, ds, kGridFrameOffset, "GridFrameOffsetVector");
  if (!grid.empty() && grid.size() != h->frames)
    fail(path, "GridFrameOffsetVector holds " + std::to_string(grid.size()) + " offsets for " +
                   std::to_string(h->frames) + " frames");

  bool first = true;
  for (std::size_t f = 0; f < h->frames; ++f) {
    FrameAttrs a;
    if (per_frame) read_attrs(path, per_frame->GetItem(f + 1).GetNestedDataSet(), &a);
    if (a.ipp.empty()) a.ipp = shared.ipp;
    if (a.iop.empty()) a.iop = shared.iop;
    if (a.spacing.empty()) a.spacing = shared.spacing;
    if (a.thickness.empty()) a.thickness = shared.thickness;
    if (a.slope.empty()) a.slope = shared.slope;
    if (a.intercept.empty()) a.intercept = shared.intercept;
    if (!a.ipp.empty() && a.ipp.size() != 3)
      fail(path, "ImagePositionPatient must hold 3 values, not " + std::to_string(a.ipp.size()));
    if (!a.iop.empty() && a.iop.size() != 6)
      fail(path, "ImageOrientationPatient must hold 6 values, not " + std::to_string(a.iop.size()));
    if (!a.spacing.empty() && (a.spacing.size() != 2 || !(a.spacing[0] > 0) || !(a.spacing[1] > 0)))
      fail(path, "bad PixelSpacing (two positive values expected)");
    if (first) {
      h->has_iop = !a.iop.empty();
      if (h->has_iop) std::copy(a.iop.begin(), a.iop.end(), h->iop.begin());
      h->has_spacing = !a.spacing.empty();
      if (h->has_spacing) {
        h->row_spacing = a.spacing[0];
        h->col_spacing = a.spacing[1];
      }
      if (!a.thickness.empty() && a.thickness[0] > 0) h->thickness = a.thickness[0];
      first = false;
    } else {
      if (a.iop.empty() != !h->has_iop || (h->has_iop && !close6(h->iop, a.iop)))
        fail(path,
             "frame " + std::to_string(f) + " has another ImageOrientationPatient than frame 0");
      if (a.spacing.empty() != !h->has_spacing ||
          (h->has_spacing && (std::fabs(a.spacing[0] - h->row_spacing) > 1e-6 * h->row_spacing ||
                              std::fabs(a.spacing[1] - h->col_spacing) > 1e-6 * h->col_spacing)))
        fail(path, "frame " + std::to_string(f) + " has another PixelSpacing than frame 0");
    }
    Slice s;
    s.frame = f;
    if (!a.ipp.empty()) {
      s.has_ipp = true;
      s.ipp = {a.ipp[0], a.ipp[1], a.ipp[2]};
    }
    if (!a.slope.empty()) {
      s.slope = a.slope[0];
      if (s.slope == 0) fail(path, "RescaleSlope is 0");
    }
    if (!a.intercept.empty()) s.intercept = a.intercept[0];
    h->slices.push_back(s);
  }
  // RT Dose style: one position, frames offset along the normal.
  if (!grid.empty() && h->slices[0].has_ipp && h->has_iop && !per_frame) {
    const Vec3 r{h->iop[0], h->iop[1], h->iop[2]}, c{h->iop[3], h->iop[4], h->iop[5]};
    const Vec3 n{r[1] * c[2] - r[2] * c[1], r[2] * c[0] - r[0] * c[2], r[0] * c[1] - r[1] * c[0]};
    const Vec3 p0 = h->slices[0].ipp;
    for (std::size_t f = 0; f < h->frames; ++f)
      for (int d = 0; d < 3; ++d) h->slices[f].ipp[d] = p0[d] + grid[f] * n[d];
  }
  return true;
}

// ---- geometry ----------------------------------------------------------------------------

Vec3 sub(const Vec3& a, const Vec3& b) {
  return {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
}
double dot(const Vec3& a, const Vec3& b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
double norm(const Vec3& a) {
  return std::sqrt(dot(a, a));
}
Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

// The row and column directions (unit vectors, LPS) of IOP; refuses a degenerate one.
void directions(const Header& h, Vec3* r, Vec3* c) {
  *r = {h.iop[0], h.iop[1], h.iop[2]};
  *c = {h.iop[3], h.iop[4], h.iop[5]};
  const double nr = norm(*r), nc = norm(*c);
  if (std::fabs(nr - 1) > 1e-3 || std::fabs(nc - 1) > 1e-3 || std::fabs(dot(*r, *c)) > 1e-3)
    fail(h.path, "ImageOrientationPatient is not two orthogonal unit vectors");
  for (int d = 0; d < 3; ++d) {
    (*r)[d] /= nr;
    (*c)[d] /= nc;
  }
}

std::string where(const Header& h, const Slice& s) {
  std::string w = "'" + printable(h.path) + "'";
  if (h.frames > 1) w += " frame " + std::to_string(s.frame);
  return w;
}

// ---- pixels ------------------------------------------------------------------------------

// RLE Lossless, decoded here from the fragments of the pixel data: GDCM's RLE codec (3.0.21)
// reads out of bounds on damaged segments (found by fuzz_dicom), and its ImageReader already
// runs it while reading, so RLE files never reach it. The table is checked first (PS3.5 G.5:
// one fragment per frame, a 64-byte header holding the segment count, one segment per byte of
// each sample, and increasing offsets that start at 64 and lie within the fragment), then each
// segment is PackBits-decoded (G.3) into the little-endian, interleaved layout the rest of the
// loader reads: segment s * bytes + k holds byte k (most significant first) of sample s.
std::vector<char> decode_rle(const Header& h, std::size_t frame_bytes,
                             const gdcm::SequenceOfFragments* frags) {
  if (frags->GetNumberOfFragments() != h.frames)
    fail(h.path, "RLE: " + std::to_string(frags->GetNumberOfFragments()) + " fragments for " +
                     std::to_string(h.frames) + " frames");
  const std::uint32_t segments = h.samples * (h.bits_allocated / 8);
  if (segments < 1 || segments > 15)  // the header holds at most 15 offsets
    fail(h.path, "RLE: " + std::to_string(segments) + " segments per frame (at most 15)");
  for (gdcm::SequenceOfFragments::SizeType f = 0; f < frags->GetNumberOfFragments(); ++f) {
    const gdcm::ByteValue* bv = frags->GetFragment(f).GetByteValue();
    const std::uint32_t n = bv ? std::uint32_t{bv->GetLength()} : 0;
    if (n < 64 || !bv->GetPointer()) fail(h.path, "RLE: a fragment without its header");
    const auto* p = reinterpret_cast<const unsigned char*>(bv->GetPointer());
    auto word = [&](int i) {
      return std::uint32_t(p[4 * i]) | (std::uint32_t(p[4 * i + 1]) << 8) |
             (std::uint32_t(p[4 * i + 2]) << 16) | (std::uint32_t(p[4 * i + 3]) << 24);
    };
    if (word(0) != segments)
      fail(h.path,
           "RLE: " + std::to_string(word(0)) + " segments, expected " + std::to_string(segments));
    std::uint32_t prev = 0;
    for (std::uint32_t q = 1; q <= segments; ++q) {
      const std::uint32_t off = word(static_cast<int>(q));
      if ((q == 1 && off != 64) || (q > 1 && off <= prev) || off >= n)
        fail(h.path, "RLE: bad segment offset " + std::to_string(off));
      prev = off;
    }
  }
  std::vector<char> rle(frame_bytes * h.frames);
  const std::size_t pixels_per_frame = std::size_t{h.rows} * h.cols;
  const std::size_t bytes = h.bits_allocated / 8;
  for (gdcm::SequenceOfFragments::SizeType f = 0; f < frags->GetNumberOfFragments(); ++f) {
    const gdcm::ByteValue* bv = frags->GetFragment(f).GetByteValue();
    const std::uint32_t n = std::uint32_t{bv->GetLength()};
    const auto* p = reinterpret_cast<const unsigned char*>(bv->GetPointer());
    auto word = [&](std::uint32_t i) {
      return std::uint32_t(p[4 * i]) | (std::uint32_t(p[4 * i + 1]) << 8) |
             (std::uint32_t(p[4 * i + 2]) << 16) | (std::uint32_t(p[4 * i + 3]) << 24);
    };
    char* frame = rle.data() + f * frame_bytes;
    for (std::uint32_t q = 0; q < segments; ++q) {
      const std::uint32_t begin = word(q + 1), end = q + 1 < segments ? word(q + 2) : n;
      const std::size_t sample = q / bytes, k = q % bytes;
      std::size_t out = 0, i = begin;
      auto put = [&](unsigned char v) {
        frame[(out * h.samples + sample) * bytes + (bytes - 1 - k)] = static_cast<char>(v);
        ++out;
      };
      while (out < pixels_per_frame) {
        if (i >= end)
          fail(h.path, "RLE: segment " + std::to_string(q) + " of frame " + std::to_string(f) +
                           " ends after " + std::to_string(out) + " of " +
                           std::to_string(pixels_per_frame) + " bytes");
        const int c = static_cast<signed char>(p[i++]);
        if (c >= 0) {  // c + 1 literal bytes
          const std::size_t len = static_cast<std::size_t>(c) + 1;
          if (i + len > end || out + len > pixels_per_frame)
            fail(h.path, "RLE: a literal run overflows segment " + std::to_string(q) +
                             " of frame " + std::to_string(f));
          for (std::size_t j = 0; j < len; ++j) put(p[i + j]);
          i += len;
        } else if (c != -128) {  // 1 - c copies of the next byte
          const std::size_t len = static_cast<std::size_t>(1 - c);
          if (i >= end || out + len > pixels_per_frame)
            fail(h.path, "RLE: a replicate run overflows segment " + std::to_string(q) +
                             " of frame " + std::to_string(f));
          const unsigned char v = p[i++];
          for (std::size_t j = 0; j < len; ++j) put(v);
        }
      }
    }
  }
  return rle;
}

// Decodes the pixel data of `h` (GDCM: every transfer syntax it supports) and returns the raw
// buffer, frames after one another, samples interleaved.
std::vector<char> read_pixels(const Header& h, std::size_t frame_bytes) {
  io::isolation_ping();
  const std::string file = read_checked(h.path);
  {
    std::istringstream plain_in(file);
    gdcm::Reader plain;
    plain.SetStream(plain_in);
    if (g_log) g_log->clear();
    if (plain.Read() && plain.GetFile().GetHeader().GetDataSetTransferSyntax() ==
                            gdcm::TransferSyntax::RLELossless) {
      const gdcm::DataSet& ds = plain.GetFile().GetDataSet();
      if (!ds.FindDataElement(kPixelData)) fail(h.path, "no pixel data");
      const gdcm::SequenceOfFragments* frags =
          ds.GetDataElement(kPixelData).GetSequenceOfFragments();
      if (!frags) fail(h.path, "RLE: the pixel data is not encapsulated");
      return decode_rle(h, frame_bytes, frags);
    }
  }
  std::istringstream in(file);
  gdcm::ImageReader reader;
  reader.SetStream(in);
  if (g_log) g_log->clear();
  if (!reader.Read())
    fail(h.path, "cannot read the DICOM image (damaged, or no pixel data)" + gdcm_reason());
  if (g_log && g_log->contains("Incomplete Pixel Data"))
    fail(h.path, "truncated DICOM file: the pixel data is incomplete");
  const gdcm::Image& img = reader.GetImage();
  const gdcm::PixelFormat& pf = img.GetPixelFormat();
  const unsigned* dims = img.GetDimensions();
  const std::size_t frames = img.GetNumberOfDimensions() > 2 ? dims[2] : 1;
  if (dims[0] != h.cols || dims[1] != h.rows || frames != h.frames ||
      pf.GetSamplesPerPixel() != h.samples || pf.GetBitsAllocated() != h.bits_allocated)
    fail(h.path, "the pixel data does not match the header (size or pixel type)");
  const std::string ts =
      img.GetTransferSyntax().GetString() ? img.GetTransferSyntax().GetString() : "?";
  if (img.GetBufferLength() != frame_bytes * h.frames)
    fail(h.path, "the pixel data does not match the header (" +
                     std::to_string(img.GetBufferLength()) + " bytes decoded, " +
                     std::to_string(frame_bytes * h.frames) + " expected)");
  // Native (uncompressed) pixel data must hold every frame: GDCM's RAW codec would copy past
  // a short value.
  const gdcm::DataSet& ds = reader.GetFile().GetDataSet();
  if (!ds.FindDataElement(kPixelData)) fail(h.path, "no pixel data");
  const gdcm::DataElement& pixels = ds.GetDataElement(kPixelData);
  if (pixels.GetSequenceOfFragments()) {
    // Compressed (not RLE: see decode_rle): the codec checks its own stream.
  } else {
    const gdcm::ByteValue* bv = pixels.GetByteValue();
    if (!bv || bv->GetLength() < frame_bytes * h.frames)
      fail(h.path, "the pixel data holds " +
                       std::to_string(bv ? std::uint32_t{bv->GetLength()} : 0u) +
                       " bytes; the image needs " + std::to_string(frame_bytes * h.frames));
  }
  std::vector<char> buf(frame_bytes * h.frames);
  if (!img.GetBuffer(buf.data()))
    fail(h.path, "cannot decode the pixel data (transfer syntax " + ts + ")" + gdcm_reason());
  // Planar configuration 1 (RRR...GGG...BBB per frame) -> interleaved.
  if (h.samples == 3 && img.GetPlanarConfiguration() == 1) {
    const std::size_t bytes = h.bits_allocated / 8, n = std::size_t{h.rows} * h.cols;
    std::vector<char> tmp(frame_bytes);
    for (std::size_t f = 0; f < h.frames; ++f) {
      char* fr = buf.data() + f * frame_bytes;
      for (std::size_t p = 0; p < n; ++p)
        for (std::size_t s = 0; s < 3; ++s)
          std::memcpy(&tmp[(p * 3 + s) * bytes], fr + (s * n + p) * bytes, bytes);
      std::memcpy(fr, tmp.data(), frame_bytes);
    }
  }
  return buf;
}

// The stored value at `p` (little endian) with only its BitsStored bits, sign-extended when
// PixelRepresentation is 1.
inline double stored_value(const unsigned char* p, const Header& h) {
  std::uint32_t w = p[0];
  if (h.bits_allocated >= 16) w |= std::uint32_t(p[1]) << 8;
  if (h.bits_allocated == 32) w |= (std::uint32_t(p[2]) << 16) | (std::uint32_t(p[3]) << 24);
  const unsigned shift = h.high_bit + 1 - h.bits_stored;
  w >>= shift;
  if (h.bits_stored < 32) w &= (std::uint32_t{1} << h.bits_stored) - 1;
  if (h.pixel_representation == 1) {
    if (h.bits_stored < 32 && (w >> (h.bits_stored - 1)) & 1) {
      return static_cast<double>(static_cast<std::int64_t>(w) - (std::int64_t{1} << h.bits_stored));
    }
    return static_cast<double>(static_cast<std::int32_t>(w));
  }
  return static_cast<double>(w);
}

// ---- the series --------------------------------------------------------------------------

void check_same(const Header& a, const Header& b) {
  if (a.rows != b.rows || a.cols != b.cols)
    fail(b.path, "mixed image sizes in the series: " + std::to_string(b.cols) + "x" +
                     std::to_string(b.rows) + " here, " + std::to_string(a.cols) + "x" +
                     std::to_string(a.rows) + " in '" + printable(a.path) + "'");
  if (a.samples != b.samples || a.bits_allocated != b.bits_allocated ||
      a.bits_stored != b.bits_stored || a.high_bit != b.high_bit ||
      a.pixel_representation != b.pixel_representation || a.photometric != b.photometric)
    fail(b.path,
         "mixed pixel types in the series (samples, bits, sign or photometric "
         "interpretation differ from '" +
             printable(a.path) + "')");
  if (a.has_iop != b.has_iop ||
      (a.has_iop && !close6(a.iop, std::vector<double>(b.iop.begin(), b.iop.end()))))
    fail(b.path, "mixed orientations in the series (ImageOrientationPatient differs from '" +
                     printable(a.path) + "')");
  if (a.has_spacing != b.has_spacing ||
      (a.has_spacing && (std::fabs(a.row_spacing - b.row_spacing) > 1e-6 * a.row_spacing ||
                         std::fabs(a.col_spacing - b.col_spacing) > 1e-6 * a.col_spacing)))
    fail(b.path, "mixed PixelSpacing in the series (differs from '" + printable(a.path) + "')");
}

Loaded assemble(const std::string& path, std::vector<Header>& headers) {
  const Header& h0 = headers[0];
  for (const Header& h : headers) check_same(h0, h);
  if (h0.photometric == "RGB") {
    if (h0.samples != 3) fail(h0.path, "RGB with SamplesPerPixel " + std::to_string(h0.samples));
  } else if (h0.photometric == "MONOCHROME1" || h0.photometric == "MONOCHROME2") {
    if (h0.samples != 1)
      fail(h0.path, h0.photometric + " with SamplesPerPixel " + std::to_string(h0.samples));
  } else {
    fail(h0.path, "photometric interpretation " + io::quote(h0.photometric) +
                      " is not supported (MONOCHROME1, MONOCHROME2 or RGB)");
  }

  std::vector<Slice> slices;
  for (std::size_t i = 0; i < headers.size(); ++i)
    for (Slice s : headers[i].slices) {
      s.file = i;
      slices.push_back(s);
    }
  const std::size_t n = slices.size();

  // Bounded work: the size of the whole array before anything is allocated.
  const std::size_t bytes = h0.bits_allocated / 8;
  std::size_t values = 0, frame_bytes = 0;
  if (!io::checked_mul(std::size_t{h0.rows} * h0.cols, h0.samples, &frame_bytes) ||
      !io::checked_mul(frame_bytes, n, &values) || values > kDicomMaxValues)
    fail(path, "the series is too large: " + std::to_string(n) + " slices of " +
                   std::to_string(h0.cols) + "x" + std::to_string(h0.rows) + "x" +
                   std::to_string(h0.samples) + " values (at most " +
                   std::to_string(kDicomMaxValues) + " values)");
  frame_bytes *= bytes;
  // Bounded by the files' real size: what each file claims must fit in what it can hold at its
  // transfer syntax's best compression (a 700-byte file claiming 1 GiB of native pixels is
  // refused here, before anything is allocated).
  for (const Header& h : headers) {
    const double claimed = double(h.rows) * h.cols * h.samples * double(h.frames);
    if (claimed > double(h.file_bytes) * h.samples_per_byte)
      fail(h.path, "the file is too small for its image: " + std::to_string(h.frames) + " x " +
                       std::to_string(h.cols) + "x" + std::to_string(h.rows) + "x" +
                       std::to_string(h.samples) + " samples of " + std::to_string(bytes * 8) +
                       " bits do not fit in " + std::to_string(h.file_bytes) +
                       " bytes (a damaged or truncated file)");
  }

  Loaded l;
  const bool oriented = h0.has_iop && slices[0].has_ipp;
  Mat4 m = mat4_identity();  // LPS
  if (n > 1) {
    for (const Slice& s : slices)
      if (!s.has_ipp || !h0.has_iop)
        fail(headers[s.file].path, std::to_string(n) +
                                       " slices (files or frames) need ImagePositionPatient and "
                                       "ImageOrientationPatient on every slice "
                                       "to order them (missing in " +
                                       where(headers[s.file], s) + ")");
  }
  if (oriented) {
    if (!h0.has_spacing) fail(h0.path, "the image is oriented but has no PixelSpacing");
    Vec3 r, c;
    directions(h0, &r, &c);
    const Vec3 normal = cross(r, c);
    for (Slice& s : slices) s.along = dot(s.ipp, normal);
    std::stable_sort(slices.begin(), slices.end(),
                     [](const Slice& a, const Slice& b) { return a.along < b.along; });
    Vec3 kcol{normal[0], normal[1], normal[2]};
    if (n == 1) {
      const double t = h0.thickness > 0 ? h0.thickness : 1.0;
      for (double& v : kcol) v *= t;
    } else {
      for (std::size_t q = 1; q < n; ++q) {
        const double gap = slices[q].along - slices[q - 1].along;
        if (gap <= 1e-3)
          fail(path,
               "duplicate slice position: " + where(headers[slices[q - 1].file], slices[q - 1]) +
                   " and " + where(headers[slices[q].file], slices[q]) + " both lie at " +
                   num(slices[q].along) + " mm along the slice normal");
      }
      // The typical gap (the median) is the reference; the gap farthest from it is named.
      std::vector<double> gaps;
      for (std::size_t q = 1; q < n; ++q) gaps.push_back(slices[q].along - slices[q - 1].along);
      std::vector<double> sorted = gaps;
      std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
      const double median = sorted[sorted.size() / 2];
      const double tol = std::max(0.01, 0.01 * median);
      std::size_t worst = 0;
      for (std::size_t q = 1; q < gaps.size(); ++q)
        if (std::fabs(gaps[q] - median) > std::fabs(gaps[worst] - median)) worst = q;
      if (std::fabs(gaps[worst] - median) > tol)
        fail(path, "uneven slice spacing: a gap of " + num(gaps[worst]) + " mm between " +
                       where(headers[slices[worst].file], slices[worst]) + " and " +
                       where(headers[slices[worst + 1].file], slices[worst + 1]) +
                       " where the series steps by " + num(median) +
                       " mm (a missing slice? resampling is not done)");
      const Vec3 total = sub(slices[n - 1].ipp, slices[0].ipp);
      for (int d = 0; d < 3; ++d) kcol[d] = total[d] / double(n - 1);
      for (std::size_t q = 1; q + 1 < n; ++q) {
        Vec3 expect = slices[0].ipp;
        for (int d = 0; d < 3; ++d) expect[d] += kcol[d] * double(q);
        const double off = norm(sub(slices[q].ipp, expect));
        if (off > tol)
          fail(path, "the slice positions are not on one line: " +
                         where(headers[slices[q].file], slices[q]) + " is " + num(off) +
                         " mm off the line through the first and last slices");
      }
    }
    for (int d = 0; d < 3; ++d) {
      m[d][0] = r[d] * h0.col_spacing;
      m[d][1] = c[d] * h0.row_spacing;
      m[d][2] = kcol[d];
      m[d][3] = slices[0].ipp[d];
    }
    l.geometry.affine = flip_ras_lps(m);
    l.geometry.source = "dicom";
  } else if (h0.has_spacing) {
    l.spacing = {h0.row_spacing, h0.col_spacing};  // one unoriented slice
  }

  // Values.
  bool identity = true;
  for (const Slice& s : slices)
    if (s.slope != 1 || s.intercept != 0) identity = false;
  if (h0.samples != 1) identity = true;  // rescale applies to grey values only
  std::vector<std::size_t> dims;
  if (n > 1) dims.push_back(n);
  dims.push_back(h0.rows);
  dims.push_back(h0.cols);
  l.array = ArrayD(dims, h0.samples);
  l.channel_axis = h0.samples > 1;
  const std::size_t per_slice = std::size_t{h0.rows} * h0.cols * h0.samples;
  // Slices grouped by file so that each file is decoded once.
  std::vector<std::vector<std::size_t>> by_file(headers.size());
  for (std::size_t q = 0; q < n; ++q) by_file[slices[q].file].push_back(q);
  for (std::size_t fi = 0; fi < headers.size(); ++fi) {
    if (by_file[fi].empty()) continue;
    const Header& h = headers[fi];
    const std::vector<char> buf = read_pixels(h, frame_bytes);
    for (std::size_t q : by_file[fi]) {
      const Slice& s = slices[q];
      const auto* src = reinterpret_cast<const unsigned char*>(buf.data()) + s.frame * frame_bytes;
      double* dst = l.array.data() + q * per_slice;
      for (std::size_t v = 0; v < per_slice; ++v) {
        const double x = stored_value(src + v * bytes, h);
        dst[v] = identity ? x : x * s.slope + s.intercept;
      }
    }
  }

  if (!identity) {
    l.dtype = DType::F64;
  } else {
    const bool sign = h0.pixel_representation == 1;
    if (h0.bits_allocated == 8)
      l.dtype = sign ? DType::I8 : DType::U8;
    else if (h0.bits_allocated == 16)
      l.dtype = sign ? DType::I16 : DType::U16;
    else
      l.dtype = sign ? DType::I32 : DType::U32;
  }
  return l;
}

bool has_dicom_marker(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 132) return false;
  io::InputFile in(path);
  std::vector<unsigned char> head;
  in.read_append(head, 132);
  return head.size() == 132 && std::memcmp(head.data() + 128, "DICM", 4) == 0;
}

Loaded load_folder(const std::string& path) {
  std::vector<std::string> names;
  std::error_code ec;
  fs::directory_iterator it(path, ec), end;
  if (ec) fail(path, "cannot list the folder: " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) fail(path, "cannot list the folder: " + ec.message());
    if (names.size() >= kMaxFolderEntries)
      fail(path, "the folder holds more than " + std::to_string(kMaxFolderEntries) + " entries");
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  std::vector<Header> headers;
  std::size_t skipped = 0;
  for (const std::string& name : names) {
    const std::string file = (fs::path(path) / name).string();
    std::error_code e2;
    if (fs::is_directory(file, e2)) {
      ++skipped;  // subfolders are not searched
      continue;
    }
    check_input(file);
    const bool dcm = io::lower_extension(file) == ".dcm";
    if (!dcm && !has_dicom_marker(file)) {
      ++skipped;  // not DICOM: README, .DS_Store, thumbnails, ...
      continue;
    }
    Header h;
    if (!read_header(file, &h)) {
      ++skipped;  // DICOM without an image: DICOMDIR, structured report, ...
      continue;
    }
    headers.push_back(std::move(h));
  }
  if (headers.empty())
    fail(path, "no DICOM image files in the folder (" + std::to_string(skipped) +
                   " entries skipped: subfolders, non-DICOM files and DICOM files without an "
                   "image)");
  std::map<std::string, std::size_t> series;
  for (const Header& h : headers) ++series[h.series];
  if (series.size() > 1) {
    std::string list;
    std::size_t shown = 0;
    for (const auto& [uid, count] : series) {
      if (shown++ == 8) {
        list += ", ...";
        break;
      }
      list += (list.empty() ? "" : ", ") +
              (uid.empty() ? std::string("(no SeriesInstanceUID)") : io::quote(uid, 64)) + ": " +
              std::to_string(count) + (count == 1 ? " file" : " files");
    }
    fail(path, "the folder holds " + std::to_string(series.size()) + " DICOM series (" + list +
                   "); give a folder that holds one series only, or a single file");
  }
  return assemble(path, headers);
}

Loaded load_dicom_impl(const std::string& path) {
  std::lock_guard<std::mutex> lock(gdcm_mutex());
  GdcmLog log;
  g_log = &log;
  struct Reset {
    ~Reset() { g_log = nullptr; }
  } reset;
  try {
    std::error_code ec;
    if (fs::is_directory(path, ec)) return load_folder(path);
    Header h;
    if (!read_header(path, &h)) fail(path, "a DICOM file without an image (no Rows)");
    std::vector<Header> headers;
    headers.push_back(std::move(h));
    return assemble(path, headers);
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::length_error&) {
    throw;
  } catch (const std::exception& e) {
    fail(path, std::string("damaged DICOM: ") + e.what());
  }
}

}  // namespace

bool looks_like_dicom(const std::string& path) {
  try {
    return has_dicom_marker(path);
  } catch (const Error&) {
    return false;  // unreadable: the caller's loader reports it
  }
}

namespace {

// ---- GDCM in a child process (isolate.h) -------------------------------------------------
// GDCM 3.0.21 aborts on assertions for many damaged data sets that the structure walk above
// does not anticipate (libFuzzer finds a new one every few minutes), so the whole GDCM part of
// a load runs in a child process and its result comes back through a pipe: status byte 0 and
// the Loaded (dtype, channel axis, dims, channels, spacing, affine, geometry source, values),
// or status 1 and an sv::Error message, 2 std::bad_alloc, 3 std::length_error.

constexpr double kDicomQuietLimitS = 120;  // per file read or decoded, ample on any disk

void put_u64(io::ChildWriter& w, std::uint64_t v) {
  w.write(&v, sizeof v);
}
void put_text(io::ChildWriter& w, const std::string& s) {
  put_u64(w, s.size());
  w.write(s.data(), s.size());
}
std::uint64_t get_u64(io::ParentReader& r) {
  std::uint64_t v = 0;
  r.read(&v, sizeof v);
  return v;
}
std::string get_text(io::ParentReader& r, const std::string& path) {
  const std::uint64_t n = get_u64(r);
  if (n > (1u << 20))
    fail(path, "the DICOM reader sent a message of " + std::to_string(n) + " bytes");
  std::string s(static_cast<std::size_t>(n), '\0');
  r.read(s.data(), s.size());
  return s;
}

void child_load(const std::string& path, io::ChildWriter& w) {
  unsigned char status = 0;
  std::string message;
  Loaded l;
  try {
    l = load_dicom_impl(path);
  } catch (const Error& e) {
    status = 1;
    message = e.what();
  } catch (const std::bad_alloc&) {
    status = 2;
  } catch (const std::length_error&) {
    status = 3;
  } catch (const std::exception& e) {
    status = 1;
    try {
      fail(path, std::string("damaged DICOM: ") + e.what());
    } catch (const Error& named) {
      message = named.what();
    }
  }
  w.write(&status, 1);
  if (status != 0) {
    put_text(w, message);
    return;
  }
  const std::uint32_t dtype = static_cast<std::uint32_t>(l.dtype);
  w.write(&dtype, sizeof dtype);
  const unsigned char channel_axis = l.channel_axis ? 1 : 0;
  w.write(&channel_axis, 1);
  put_u64(w, l.array.rank());
  for (std::size_t d : l.array.dims()) put_u64(w, d);
  put_u64(w, l.array.channels());
  put_u64(w, l.spacing.size());
  w.write(l.spacing.data(), l.spacing.size() * sizeof(double));
  for (const auto& row : l.geometry.affine) w.write(row.data(), row.size() * sizeof(double));
  put_text(w, l.geometry.source);
  w.write(l.array.data(), l.array.size() * sizeof(double));
}

Loaded parent_load(const std::string& path, io::ParentReader& r) {
  unsigned char status = 0;
  r.read(&status, 1);
  if (status == 2) throw std::bad_alloc();
  if (status == 3) throw std::length_error("DICOM");
  if (status == 1) throw Error(get_text(r, path));
  if (status != 0) fail(path, "the DICOM reader sent an unknown status");
  Loaded l;
  std::uint32_t dtype = 0;
  r.read(&dtype, sizeof dtype);
  if (dtype > static_cast<std::uint32_t>(DType::F16))
    fail(path, "the DICOM reader sent an unknown dtype");
  l.dtype = static_cast<DType>(dtype);
  unsigned char channel_axis = 0;
  r.read(&channel_axis, 1);
  l.channel_axis = channel_axis != 0;
  const std::uint64_t rank = get_u64(r);
  if (rank < 1 || rank > 4) fail(path, "the DICOM reader sent rank " + std::to_string(rank));
  std::vector<std::size_t> dims(static_cast<std::size_t>(rank));
  std::size_t total = 1;
  for (std::size_t& d : dims) {
    d = static_cast<std::size_t>(get_u64(r));
    if (d == 0 || !io::checked_mul(total, d, &total))
      fail(path, "the DICOM reader sent a bad shape");
  }
  const std::uint64_t channels = get_u64(r);
  if (channels < 1 || channels > 4 || !io::checked_mul(total, channels, &total))
    fail(path, "the DICOM reader sent a bad channel count");
  const std::uint64_t nspacing = get_u64(r);
  if (nspacing > 4) fail(path, "the DICOM reader sent a bad spacing");
  l.spacing.resize(static_cast<std::size_t>(nspacing));
  r.read(l.spacing.data(), l.spacing.size() * sizeof(double));
  for (auto& row : l.geometry.affine) r.read(row.data(), row.size() * sizeof(double));
  l.geometry.source = get_text(r, path);
  l.array = ArrayD(dims, static_cast<std::size_t>(channels));
  r.read(l.array.data(), l.array.size() * sizeof(double));
  return l;
}

}  // namespace

Loaded load_dicom(const std::string& path) {
  return io::guard_memory(path, [&] {
    // The structure walk first, here: a clear refusal without a process for the common damage,
    // and the walk (our code) in view of the fuzzer.
    std::error_code ec;
    if (!fs::is_directory(path, ec)) (void)read_checked(path);
    Loaded l;
    io::run_isolated(
        path, "the DICOM decoder (GDCM)", kDicomQuietLimitS,
        [&](io::ChildWriter& w) { child_load(path, w); },
        [&](io::ParentReader& r) { l = parent_load(path, r); });
    return io::finish_loaded(path, std::move(l));
  });
}

}  // namespace sv
