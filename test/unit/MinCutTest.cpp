//===- MinCutTest.cpp - The training partitioner's minimum vertex cut -----===//

#include "tgc/Transforms/MinCut.h"

#include <catch2/catch.hpp>

using namespace tgc;

namespace {
using Nodes = llvm::SmallVector<unsigned>;
constexpr int64_t kInf = MinCutGraph::kInfinite;

/// x -> relu -> mm -> out: the forward of `mm(relu(x), w)`; the backward (tied to the sink) reads
/// the relu result. `reluCost` is what saving the relu result costs.
struct ReluMatmul {
  explicit ReluMatmul(int64_t xCost, int64_t reluCost) {
    x = graph.addNode(xCost);
    relu = graph.addNode(reluCost);
    grad = graph.addNode(kInf);
    graph.addUse(x, relu);
    graph.addUse(relu, grad);
    graph.tieToSource(x);
    graph.tieInputToSink(grad);
  }
  MinCutGraph graph;
  unsigned x, relu, grad;
};
} // namespace

TEST_CASE("A tie between saving an input and saving its recomputable user "
          "saves the input",
          "[mincut]") {
  ReluMatmul problem(64, 64);
  auto cut = problem.graph.solve();
  REQUIRE(cut);
  CHECK(cut->cutNodes == Nodes{problem.x});
  CHECK(cut->cost == 64);
  CHECK(cut->inputOnSourceSide[problem.x]);
  CHECK_FALSE(cut->inputOnSourceSide[problem.relu]);
}

TEST_CASE("A value cheaper than its input is saved instead of recomputed", "[mincut]") {
  ReluMatmul problem(64, 8);
  auto cut = problem.graph.solve();
  REQUIRE(cut);
  CHECK(cut->cutNodes == Nodes{problem.relu});
  CHECK(cut->cost == 8);
  CHECK(cut->inputOnSourceSide[problem.relu]);
  CHECK_FALSE(cut->outputOnSourceSide[problem.relu]);
}

TEST_CASE("A value tied to the source is saved rather than recomputed from "
          "cheaper inputs",
          "[mincut]") {
  ReluMatmul problem(8, 64);
  problem.graph.tieToSource(problem.relu);
  auto cut = problem.graph.solve();
  REQUIRE(cut);
  CHECK(cut->cutNodes == Nodes{problem.relu});
  CHECK(cut->cost == 64);
}

TEST_CASE("Two values needed after the cut share one cheaper common input", "[mincut]") {
  // x (16) feeds a (32) and b (32); the backward needs both a and b.
  MinCutGraph graph;
  unsigned x = graph.addNode(16), a = graph.addNode(32), b = graph.addNode(32);
  unsigned grad = graph.addNode(kInf);
  graph.tieToSource(x);
  graph.addUse(x, a);
  graph.addUse(x, b);
  graph.addUse(a, grad);
  graph.addUse(b, grad);
  graph.tieInputToSink(grad);
  auto cut = graph.solve();
  REQUIRE(cut);
  CHECK(cut->cutNodes == Nodes{x});
  CHECK(cut->cost == 16);
}

TEST_CASE("A value whose output is needed after the cut can be saved", "[mincut]") {
  // The value tied by its output may itself be saved: x (64) -> v (4), v needed after.
  MinCutGraph graph;
  unsigned x = graph.addNode(64), v = graph.addNode(4);
  graph.tieToSource(x);
  graph.addUse(x, v);
  graph.tieOutputToSink(v);
  auto cut = graph.solve();
  REQUIRE(cut);
  CHECK(cut->cutNodes == Nodes{v});
}

TEST_CASE("A node tied to the sink by its input cannot be saved", "[mincut]") {
  MinCutGraph graph;
  unsigned x = graph.addNode(64), v = graph.addNode(4);
  graph.tieToSource(x);
  graph.addUse(x, v);
  graph.tieInputToSink(v);
  auto cut = graph.solve();
  REQUIRE(cut);
  CHECK(cut->cutNodes == Nodes{x});
  CHECK_FALSE(cut->inputOnSourceSide[v]);
}

TEST_CASE("A graph without a path from source to sink cuts nothing", "[mincut]") {
  MinCutGraph graph;
  unsigned x = graph.addNode(64), tangent = graph.addNode(64);
  graph.tieToSource(x);
  graph.tieInputToSink(tangent);
  auto cut = graph.solve();
  REQUIRE(cut);
  CHECK(cut->cutNodes.empty());
  CHECK(cut->cost == 0);
  CHECK(cut->outputOnSourceSide[x]);
  CHECK_FALSE(cut->inputOnSourceSide[tangent]);
}

TEST_CASE("A path of infinite edges from source to sink has no finite cut", "[mincut]") {
  MinCutGraph graph;
  unsigned scalar = graph.addNode(kInf);
  graph.tieToSource(scalar);
  graph.tieOutputToSink(scalar);
  CHECK_FALSE(graph.solve());
}

TEST_CASE("Large capacities do not overflow the flow", "[mincut]") {
  // Many parallel values of 2^40 bytes each between the source and the sink.
  MinCutGraph graph;
  unsigned sinkNode = graph.addNode(kInf);
  graph.tieInputToSink(sinkNode);
  for (int i = 0; i < 1000; ++i) {
    unsigned v = graph.addNode(int64_t(1) << 40);
    graph.tieToSource(v);
    graph.addUse(v, sinkNode);
  }
  auto cut = graph.solve();
  REQUIRE(cut);
  CHECK(cut->cost == 1000 * (int64_t(1) << 40));
  CHECK(cut->cutNodes.size() == 1000);
}

TEST_CASE("Capacities whose total exceeds int64 are scaled down, and the cut stays minimal",
          "[mincut]") {
  // Four chains source -> v (2^61 bytes) -> w (2^60), w needed after the cut: saving
  // each w is cheapest, though the capacities together pass INT64_MAX.
  MinCutGraph graph;
  Nodes ws;
  for (int i = 0; i < 4; ++i) {
    unsigned v = graph.addNode(int64_t(1) << 61), w = graph.addNode(int64_t(1) << 60);
    graph.tieToSource(v);
    graph.addUse(v, w);
    graph.tieOutputToSink(w);
    ws.push_back(w);
  }
  auto cut = graph.solve();
  REQUIRE(cut);
  CHECK(cut->cutNodes == ws);
  CHECK(cut->cost == 4 * (int64_t(1) << 60));
}
