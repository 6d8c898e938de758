#include "libmkb/stats/detail/distributions.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mkb::stats::detail {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Horner evaluation of c[0] + c[1] x + ... + c[7] x^7.
double Poly8(const double (&c)[8], double x) {
  double r = c[7];
  for (int i = 6; i >= 0; --i) r = r * x + c[i];
  return r;
}

}  // namespace

double NormalCdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

double NormalQuantile(double p) {
  if (std::isnan(p) || p < 0 || p > 1) return kNaN;
  if (p == 0) return -kInf;
  if (p == 1) return kInf;
  // Wichura, M. J. (1988). Algorithm AS 241: The percentage points of the normal distribution.
  // Applied Statistics 37(3), 477-484. PPND16.
  static constexpr double a[8] = {3.3871328727963666080e0, 1.3314166789178437745e2,
                                  1.9715909503065514427e3, 1.3731693765509461125e4,
                                  4.5921953931549871457e4, 6.7265770927008700853e4,
                                  3.3430575583588128105e4, 2.5090809287301226727e3};
  static constexpr double b[8] = {1.0,
                                  4.2313330701600911252e1,
                                  6.8718700749205790830e2,
                                  5.3941960214247511077e3,
                                  2.1213794301586595867e4,
                                  3.9307895800092710610e4,
                                  2.8729085735721942674e4,
                                  5.2264952788528545610e3};
  static constexpr double c[8] = {1.42343711074968357734e0,  4.63033784615654529590e0,
                                  5.76949722146069140550e0,  3.64784832476320460504e0,
                                  1.27045825245236838258e0,  2.41780725177450611770e-1,
                                  2.27238449892691845833e-2, 7.74545014278341407640e-4};
  static constexpr double d[8] = {1.0,
                                  2.05319162663775882187e0,
                                  1.67638483018380384940e0,
                                  6.89767334985100004550e-1,
                                  1.48103976427480074590e-1,
                                  1.51986665636164571966e-2,
                                  5.47593808499534494600e-4,
                                  1.05075007164441684324e-9};
  static constexpr double e[8] = {6.65790464350110377720e0,  5.46378491116411436990e0,
                                  1.78482653991729133580e0,  2.96560571828504891230e-1,
                                  2.65321895265761230930e-2, 1.24266094738807843860e-3,
                                  2.71155556874348757815e-5, 2.01033439929228813265e-7};
  static constexpr double f[8] = {1.0,
                                  5.99832206555887937690e-1,
                                  1.36929880922735805310e-1,
                                  1.48753612908506148525e-2,
                                  7.86869131145613259100e-4,
                                  1.84631831751005468180e-5,
                                  1.42151175831644588870e-7,
                                  2.04426310338993978564e-15};
  const double q = p - 0.5;
  if (std::fabs(q) <= 0.425) {
    const double r = 0.180625 - q * q;
    return q * Poly8(a, r) / Poly8(b, r);
  }
  double r = q < 0 ? p : 1 - p;
  r = std::sqrt(-std::log(r));
  double x;
  if (r <= 5) {
    r -= 1.6;
    x = Poly8(c, r) / Poly8(d, r);
  } else {
    r -= 5;
    x = Poly8(e, r) / Poly8(f, r);
  }
  return q < 0 ? -x : x;
}

double BinomialHalfCdf(int64_t k, int64_t n) {
  if (k < 0) return 0;
  if (k >= n) return 1;
  // Terms C(n, j) / 2^n through log-gamma: relative error about 1e-14 for n up to millions.
  const double log_norm =
      std::lgamma(static_cast<double>(n) + 1) - static_cast<double>(n) * std::log(2.0);
  double total = 0;
  for (int64_t j = 0; j <= k; ++j) {
    total += std::exp(log_norm - std::lgamma(static_cast<double>(j) + 1) -
                      std::lgamma(static_cast<double>(n - j) + 1));
  }
  return std::min(total, 1.0);
}

double BinomialHalfTwoSidedP(int64_t k, int64_t n) {
  if (n <= 0) return 1;
  return std::min(1.0, 2 * BinomialHalfCdf(std::min(k, n - k), n));
}

double QuantileOfSorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty() || std::isnan(q)) return kNaN;
  q = std::clamp(q, 0.0, 1.0);
  // Written as scipy.stats.quantile(method="linear") computes it, so that the two agree to the
  // last bit: position jg = q n + (1 - q) (1-based), weight g its fractional part.
  const double n = static_cast<double>(sorted.size());
  const double jg = q * n + (1 - q);
  const double jp1 = std::floor(jg);
  double j = jp1 - 1;
  double g = std::fmod(jg, 1.0);
  if (j < 0) g = 0;
  j = std::clamp(j, 0.0, n - 1);
  const double k = std::clamp(jp1, 0.0, n - 1);
  return (1 - g) * sorted[static_cast<size_t>(j)] + g * sorted[static_cast<size_t>(k)];
}

}  // namespace mkb::stats::detail
