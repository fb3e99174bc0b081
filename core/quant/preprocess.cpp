// The --data image preprocessing spec: ParsePreprocess and Preprocess::ToString.
#include "core/quant/preprocess.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>

#include "core/suggest.h"

namespace chipfit {

namespace {

const std::vector<std::string>& KnownKeys() {
  static const std::vector<std::string> keys = {"resize", "channels", "scale", "mean", "std", "layout"};
  return keys;
}

// Cap on resize dims: keeps H × W × channels × batch far from overflow; no camera image is near it.
constexpr int64_t kMaxResizeDim = 65536;

std::string Trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t pos = s.find(sep, start);
    parts.push_back(s.substr(start, pos == std::string::npos ? std::string::npos : pos - start));
    if (pos == std::string::npos) break;
    start = pos + 1;
  }
  return parts;
}

std::string FormatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

std::string FormatList(const std::vector<double>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) out += (i > 0 ? "/" : "") + FormatNumber(values[i]);
  return out;
}

std::string KeyValue(const std::string& key, const std::string& value) { return key + "=" + value; }

// from_chars rather than strtod: no locale, and the whole text must be the number.
std::optional<double> ParseNumber(const std::string& text) {
  const std::string t = Trim(text);
  if (t.empty()) return std::nullopt;
  const char* begin = t.data();
  if (*begin == '+') ++begin;  // from_chars refuses a leading '+', people write it
  double v = 0.0;
  const auto [ptr, ec] = std::from_chars(begin, t.data() + t.size(), v);
  if (ec != std::errc() || ptr != t.data() + t.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

Result<double> ParseScalar(const std::string& key, const std::string& value) {
  const auto v = ParseNumber(value);
  if (!v) return InvalidArgument("preprocess: " + KeyValue(key, value) + ": '" + value + "' is not a finite number");
  return *v;
}

Result<std::vector<double>> ParsePerChannel(const std::string& key, const std::string& value) {
  std::vector<double> values;
  for (const std::string& part : Split(value, '/')) {
    const auto v = ParseNumber(part);
    if (!v) {
      return InvalidArgument("preprocess: " + KeyValue(key, value) + ": '" + Trim(part) +
                             "' is not a finite number (values are separated by '/')");
    }
    values.push_back(*v);
  }
  if (values.size() != 1 && values.size() != 3) {
    return InvalidArgument("preprocess: " + KeyValue(key, value) + ": " + std::to_string(values.size()) +
                           " values; give 1 (for every channel) or 3 (one per channel)");
  }
  return values;
}

std::optional<int64_t> ParseDim(const std::string& text) {
  const std::string t = Trim(text);
  if (t.empty() || !std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || ptr != t.data() + t.size()) return std::nullopt;
  return v;
}

Status ParseResize(const std::string& value, Preprocess& out) {
  std::string size = Trim(value);
  const std::string lower = Lower(size);
  const std::string keep = "keep-aspect";
  if (lower.starts_with(keep)) {
    out.keep_aspect = true;
    if (lower.size() == keep.size()) return Status::Ok();
    if (lower[keep.size()] != ':') {
      return InvalidArgument("preprocess: resize=" + value + ": expected HxW, keep-aspect or keep-aspect:HxW");
    }
    size = size.substr(keep.size() + 1);
  }
  const size_t x = Lower(size).find('x');
  const auto h = x == std::string::npos ? std::nullopt : ParseDim(size.substr(0, x));
  const auto w = x == std::string::npos ? std::nullopt : ParseDim(size.substr(x + 1));
  if (!h || !w) {
    return InvalidArgument("preprocess: resize=" + value + ": expected HxW (e.g. 640x640), keep-aspect or " +
                           "keep-aspect:HxW");
  }
  if (*h < 1 || *w < 1 || *h > kMaxResizeDim || *w > kMaxResizeDim) {
    return InvalidArgument("preprocess: resize=" + value + ": H and W must be between 1 and " +
                           std::to_string(kMaxResizeDim));
  }
  out.resize = std::make_pair(*h, *w);
  return Status::Ok();
}

}  // namespace

std::string Preprocess::ToString() const {
  std::vector<std::string> parts;
  if (resize) {
    const std::string size = std::to_string(resize->first) + "x" + std::to_string(resize->second);
    parts.push_back("resize=" + (keep_aspect ? "keep-aspect:" + size : size));
  } else if (keep_aspect) {
    parts.emplace_back("resize=keep-aspect");
  }
  parts.push_back("channels=" + channels);
  parts.push_back("scale=" + FormatNumber(scale));
  parts.push_back("mean=" + FormatList(mean));
  parts.push_back("std=" + FormatList(std));
  if (!layout.empty()) parts.push_back("layout=" + layout);
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i > 0 ? "," : "") + parts[i];
  return out;
}

Result<Preprocess> ParsePreprocess(const std::string& text) {
  Preprocess out;
  std::set<std::string> seen;
  for (const std::string& raw : Split(text, ',')) {
    const std::string item = Trim(raw);
    if (item.empty()) continue;  // "" and a trailing comma mean nothing more
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      return InvalidArgument("preprocess: '" + item + "' is not key=value (keys: resize, channels, scale, mean, " +
                             "std, layout)");
    }
    const std::string key = Lower(Trim(item.substr(0, eq)));
    const std::string value = Trim(item.substr(eq + 1));
    if (std::find(KnownKeys().begin(), KnownKeys().end(), key) == KnownKeys().end()) {
      std::optional<std::string> nearest = NearestName(key, KnownKeys());
      if (!nearest) {
        // NearestName allows a third of the word in edits; a swapped pair in a 4-letter key ("maen") costs 2.
        size_t best = std::string::npos;
        for (const std::string& known : KnownKeys()) {
          const size_t d = EditDistance(key, known);
          if (d <= 2 && d < key.size() && d < best) {
            best = d;
            nearest = known;
          }
        }
      }
      return InvalidArgument(
          "preprocess: unknown key '" + key + "' in '" + item + "'" +
          (nearest ? " (did you mean '" + *nearest + "'?)" : " (keys: resize, channels, scale, mean, std, layout)"));
    }
    if (!seen.insert(key).second) return InvalidArgument("preprocess: key '" + key + "' is given twice");
    if (key == "resize") {
      RETURN_IF_ERROR(ParseResize(value, out));
    } else if (key == "channels") {
      const std::string v = Lower(value);
      if (v != "rgb" && v != "bgr" && v != "gray") {
        return InvalidArgument("preprocess: channels=" + value + ": expected rgb, bgr or gray");
      }
      out.channels = v;
    } else if (key == "scale") {
      ASSIGN_OR_RETURN(out.scale, ParseScalar(key, value));
      if (out.scale <= 0.0) return InvalidArgument("preprocess: scale=" + value + ": must be greater than 0");
    } else if (key == "mean") {
      ASSIGN_OR_RETURN(out.mean, ParsePerChannel(key, value));
    } else if (key == "std") {
      ASSIGN_OR_RETURN(out.std, ParsePerChannel(key, value));
      for (double s : out.std) {
        // Dividing by 0 would turn a whole channel into inf/NaN; a negative std only flips it, never meant.
        if (s <= 0.0) return InvalidArgument("preprocess: std=" + value + ": " + FormatNumber(s) + " is not > 0");
      }
    } else if (key == "layout") {
      const std::string v = Lower(value);
      if (v != "nchw" && v != "nhwc") return InvalidArgument("preprocess: layout=" + value + ": expected nchw or nhwc");
      out.layout = v;
    }
  }
  return out;
}

}  // namespace chipfit
