// Chunked prefiltering with halos: how many samples beyond a chunk the B-spline prefilter needs
// so that the chunk's coefficients equal the whole array's to a stated tolerance, and the CPU
// function that computes a region's coefficients that way. The derivation is in docs/DESIGN.md
// ("Halos: chunked prefiltering with a proven bound"); in short:
//
// On the infinite line the degree-n prefilter is the convolution with g, the product over its
// poles z of (1 - z)^2 / ((1 - z Z^-1)(1 - z Z)), whose impulse response is
// g = *_poles (1 - z)^2 z^|m| / (1 - z^2). A chunk filtered from a window that holds h more
// samples of the (mode-extended) signal on each side, extended in any way beyond the window by
// values within the data's range R, differs from the whole array's coefficients at every chunk
// sample by at most R * T(h), T(h) = sum_{|m| > h} |g[m]| (only samples beyond the window enter,
// each at least h + 1 away, weighted by g, each off by at most R). In d dimensions (filtered axis
// by axis) the bound is R * d * G^(d-1) * T(h), G = sum_m |g[m]| = 1 / B_n(-1) (g alternates).
// Floating-point rounding adds what the whole-array filter itself has (a few ulp of G^d max|f|).
#pragma once

#include <cstddef>
#include <vector>

#include "splineview/array.h"
#include "splineview/prefilter.h"

namespace sv {

// g[0..m_max] of the degree-n prefilter (g[-m] = g[m]); degrees 2..7 (0 and 1: g = delta).
std::vector<double> prefilter_impulse_response(int degree, std::size_t m_max);
// T(h) = sum_{|m| > h} |g[m]|.
double prefilter_tail(int degree, std::size_t h);
// G = sum_m |g[m]| (the filter's gain at the Nyquist frequency, 1 / B_n(-1)).
double prefilter_norm(int degree);
// The bound on |chunk - whole| relative to the data range, for a d-D chunk with halo h on
// every axis: d * G^(d-1) * T(h).
double chunk_bound(int degree, std::size_t rank, std::size_t halo);
// The smallest halo whose chunk_bound is at most `tolerance` (relative to the data range).
// The working precision's choice: tolerance = epsilon(T) / 2 (double: about 28 samples at
// degree 3 in 1-D, float: about 13; table in docs/DESIGN.md).
std::size_t prefilter_halo(int degree, std::size_t rank, double tolerance);
template <class T>
std::size_t prefilter_halo(int degree, std::size_t rank);

// The coefficients of the region [lo[d], hi[d]) of `f` for opt.degree and opt.boundary, as the
// whole-array prefilter gives them (for Nearest and GridConstant: as sv::Interpolant's padded
// interpolant), computed from a window of `halo` samples beyond the region on each axis, read
// from the mode's extension of `f` (mirror for Wrap and Constant, edge values for Nearest, cval
// for GridConstant); nothing else of `f` is read. Within chunk_bound(degree, rank, halo) times
// the range of the extended signal (cval included for GridConstant) of the whole array's.
template <class T>
Array<T> prefilter_region(const Array<T>& f, const std::vector<std::size_t>& lo,
                          const std::vector<std::size_t>& hi, const PrefilterOptions& opt,
                          double cval, std::size_t halo);

}  // namespace sv
