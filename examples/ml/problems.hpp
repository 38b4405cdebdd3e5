// The two problems of Crucial's evaluation, on data generated from a fixed seed (every process
// regenerates the same data: only the parameters travel to the workers).
//
//   kmeans    n points in d dimensions around k true centres; the model is the k centroids;
//             a partial is the per-cluster sums and counts of the worker's points
//   logreg    n samples of d features labelled by a hidden linear rule (with noise); the model is
//             d weights and a bias; a partial is the worker's sum of gradients of the log-loss
#pragma once

#include <cppless/archive.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

namespace ml {

// Which samples a worker owns: [begin, end) of n, split evenly.
inline std::pair<std::int64_t, std::int64_t> share(std::int64_t n, int part, int parts) {
  return {n * part / parts, n * (part + 1) / parts};
}

struct kmeans {
  std::int64_t n = 0;
  int d = 0, k = 0;
  std::uint64_t seed = 0;
  std::vector<double> points;  // n * d, regenerated from the parameters

  kmeans() = default;
  kmeans(std::int64_t n_, int d_, int k_, std::uint64_t seed_) : n(n_), d(d_), k(k_), seed(seed_) { generate(); }

  void generate() {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> centre(-100, 100);
    std::normal_distribution<double> noise(0, 8);
    std::vector<double> centres(static_cast<std::size_t>(k * d));
    for (auto& c : centres) c = centre(rng);
    points.resize(static_cast<std::size_t>(n * d));
    for (std::int64_t i = 0; i < n; ++i) {
      const auto c = static_cast<std::size_t>(rng() % static_cast<std::uint64_t>(k));
      for (int j = 0; j < d; ++j) points[static_cast<std::size_t>(i * d + j)] = centres[c * static_cast<std::size_t>(d) + static_cast<std::size_t>(j)] + noise(rng);
    }
  }

  [[nodiscard]] std::vector<double> initial_model() const {
    return {points.begin(), points.begin() + static_cast<std::ptrdiff_t>(k * d)};  // the first k points
  }

  [[nodiscard]] std::vector<double> partial(const std::vector<double>& model, int part, int parts) const {
    std::vector<double> out(static_cast<std::size_t>(k * d + k), 0.0);  // sums, then counts
    auto [begin, end] = share(n, part, parts);
    for (std::int64_t i = begin; i < end; ++i) {
      const double* x = &points[static_cast<std::size_t>(i * d)];
      int best = 0;
      double best_dist = std::numeric_limits<double>::max();
      for (int c = 0; c < k; ++c) {
        double dist = 0;
        for (int j = 0; j < d; ++j) {
          const double diff = x[j] - model[static_cast<std::size_t>(c * d + j)];
          dist += diff * diff;
        }
        if (dist < best_dist) {
          best_dist = dist;
          best = c;
        }
      }
      for (int j = 0; j < d; ++j) out[static_cast<std::size_t>(best * d + j)] += x[j];
      out[static_cast<std::size_t>(k * d + best)] += 1;
    }
    return out;
  }

  [[nodiscard]] std::vector<double> update(const std::vector<double>& model, const std::vector<std::vector<double>>& partials) const {
    std::vector<double> total(static_cast<std::size_t>(k * d + k), 0.0);
    for (const auto& p : partials)
      for (std::size_t i = 0; i < total.size(); ++i) total[i] += p[i];
    std::vector<double> next = model;
    for (int c = 0; c < k; ++c) {
      const double count = total[static_cast<std::size_t>(k * d + c)];
      if (count == 0) continue;  // an empty cluster keeps its centroid
      for (int j = 0; j < d; ++j) next[static_cast<std::size_t>(c * d + j)] = total[static_cast<std::size_t>(c * d + j)] / count;
    }
    return next;
  }

  template <class Archive>
  void serialize(Archive& ar) {
    ar(n, d, k, seed);
    if constexpr (!std::is_same_v<Archive, cppless::output_archive>) generate();
  }
};

struct logreg {
  std::int64_t n = 0;
  int d = 0;
  std::uint64_t seed = 0;
  double rate = 0.5;
  std::vector<double> x;  // n * d
  std::vector<double> y;  // n labels, 0 or 1

  logreg() = default;
  logreg(std::int64_t n_, int d_, std::uint64_t seed_) : n(n_), d(d_), seed(seed_) { generate(); }

  void generate() {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal(0, 1);
    std::vector<double> truth(static_cast<std::size_t>(d + 1));
    for (auto& w : truth) w = normal(rng);
    x.resize(static_cast<std::size_t>(n * d));
    y.resize(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
      double z = truth[static_cast<std::size_t>(d)];
      for (int j = 0; j < d; ++j) {
        const double v = normal(rng);
        x[static_cast<std::size_t>(i * d + j)] = v;
        z += truth[static_cast<std::size_t>(j)] * v;
      }
      y[static_cast<std::size_t>(i)] = z + 0.5 * normal(rng) > 0 ? 1.0 : 0.0;
    }
  }

  [[nodiscard]] std::vector<double> initial_model() const { return std::vector<double>(static_cast<std::size_t>(d + 1), 0.0); }

  [[nodiscard]] std::vector<double> partial(const std::vector<double>& w, int part, int parts) const {
    std::vector<double> grad(static_cast<std::size_t>(d + 1), 0.0);
    auto [begin, end] = share(n, part, parts);
    for (std::int64_t i = begin; i < end; ++i) {
      const double* xi = &x[static_cast<std::size_t>(i * d)];
      double z = w[static_cast<std::size_t>(d)];
      for (int j = 0; j < d; ++j) z += w[static_cast<std::size_t>(j)] * xi[j];
      const double err = 1.0 / (1.0 + std::exp(-z)) - y[static_cast<std::size_t>(i)];
      for (int j = 0; j < d; ++j) grad[static_cast<std::size_t>(j)] += err * xi[j];
      grad[static_cast<std::size_t>(d)] += err;
    }
    return grad;
  }

  [[nodiscard]] std::vector<double> update(const std::vector<double>& w, const std::vector<std::vector<double>>& partials) const {
    std::vector<double> next = w;
    for (std::size_t j = 0; j < next.size(); ++j) {
      double g = 0;
      for (const auto& p : partials) g += p[j];
      next[j] -= rate * g / static_cast<double>(n);
    }
    return next;
  }

  // The share of samples the model classifies right (reported, not checked).
  [[nodiscard]] double accuracy(const std::vector<double>& w) const {
    std::int64_t right = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      double z = w[static_cast<std::size_t>(d)];
      for (int j = 0; j < d; ++j) z += w[static_cast<std::size_t>(j)] * x[static_cast<std::size_t>(i * d + j)];
      right += (z > 0) == (y[static_cast<std::size_t>(i)] == 1.0);
    }
    return static_cast<double>(right) / static_cast<double>(n);
  }

  template <class Archive>
  void serialize(Archive& ar) {
    ar(n, d, seed, rate);
    if constexpr (!std::is_same_v<Archive, cppless::output_archive>) generate();
  }
};

}  // namespace ml
