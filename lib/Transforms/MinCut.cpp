// A minimum vertex cut over a dataflow graph, with Boost.Graph's push-relabel max flow.
#include "tgc/Transforms/MinCut.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>

#include <algorithm>
#include <deque>

using namespace tgc;

unsigned MinCutGraph::addNode(int64_t capacity) {
  capacities.push_back(std::clamp<int64_t>(capacity, 0, kInfinite));
  return capacities.size() - 1;
}

void MinCutGraph::addUse(unsigned producer, unsigned user) { uses.push_back({producer, user}); }
void MinCutGraph::tieToSource(unsigned node) { sourceTies.push_back(node); }
void MinCutGraph::tieInputToSink(unsigned node) { inputSinkTies.push_back(node); }
void MinCutGraph::tieOutputToSink(unsigned node) { outputSinkTies.push_back(node); }

namespace {

using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<
        boost::edge_capacity_t, int64_t,
        boost::property<boost::edge_residual_capacity_t, int64_t,
                        boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;

/// The split graph: vertex `2n` is node n's input, `2n + 1` its output; the source and the sink
/// come last. Each edge has a zero-capacity reverse edge, as max flow needs.
struct SplitGraph {
  explicit SplitGraph(unsigned numNodes)
      : graph(2 * numNodes + 2), source(2 * numNodes), sink(2 * numNodes + 1) {}

  void addEdge(unsigned from, unsigned to, int64_t capacity) {
    auto forward = boost::add_edge(from, to, graph).first;
    auto backward = boost::add_edge(to, from, graph).first;
    auto capacityMap = boost::get(boost::edge_capacity, graph);
    auto reverseMap = boost::get(boost::edge_reverse, graph);
    capacityMap[forward] = capacity;
    capacityMap[backward] = 0;
    reverseMap[forward] = backward;
    reverseMap[backward] = forward;
  }

  /// Vertices reachable from `start` through edges with `hasRoom(edge)`.
  template <typename Pred> llvm::SmallVector<bool> reachable(unsigned start, Pred hasRoom) const {
    llvm::SmallVector<bool> seen(boost::num_vertices(graph), false);
    std::deque<unsigned> worklist{start};
    seen[start] = true;
    while (!worklist.empty()) {
      unsigned vertex = worklist.front();
      worklist.pop_front();
      for (auto edge : boost::make_iterator_range(boost::out_edges(vertex, graph))) {
        unsigned target = boost::target(edge, graph);
        if (!seen[target] && hasRoom(edge)) {
          seen[target] = true;
          worklist.push_back(target);
        }
      }
    }
    return seen;
  }

  FlowGraph graph;
  unsigned source, sink;
};

} // namespace

std::optional<MinCutGraph::Cut> MinCutGraph::solve() const {
  unsigned numNodes = getNumNodes();
  SplitGraph split(numNodes);
  auto input = [](unsigned node) { return 2 * node; };
  auto output = [](unsigned node) { return 2 * node + 1; };
  for (unsigned node = 0; node < numNodes; ++node)
    split.addEdge(input(node), output(node), capacities[node]);
  for (Use use : uses)
    split.addEdge(output(use.producer), input(use.user), kInfinite);
  for (unsigned node : sourceTies)
    split.addEdge(split.source, input(node), kInfinite);
  for (unsigned node : inputSinkTies)
    split.addEdge(input(node), split.sink, kInfinite);
  for (unsigned node : outputSinkTies)
    split.addEdge(output(node), split.sink, kInfinite);

  // Every cut is infinite when the sink is reachable through infinite edges alone; the max flow
  // would overflow, so answer before running it.
  auto capacityMap = boost::get(boost::edge_capacity, split.graph);
  if (split.reachable(split.source,
                      [&](auto edge) { return capacityMap[edge] >= kInfinite; })[split.sink])
    return std::nullopt;

  boost::push_relabel_max_flow(split.graph, split.source, split.sink);
  auto residualMap = boost::get(boost::edge_residual_capacity, split.graph);
  llvm::SmallVector<bool> sourceSide =
      split.reachable(split.source, [&](auto edge) { return residualMap[edge] > 0; });

  Cut cut;
  cut.inputOnSourceSide.resize(numNodes);
  cut.outputOnSourceSide.resize(numNodes);
  for (unsigned node = 0; node < numNodes; ++node) {
    cut.inputOnSourceSide[node] = sourceSide[input(node)];
    cut.outputOnSourceSide[node] = sourceSide[output(node)];
    if (cut.inputOnSourceSide[node] && !cut.outputOnSourceSide[node]) {
      cut.cutNodes.push_back(node);
      cut.cost += capacities[node];
    }
  }
  return cut;
}
