// A minimum vertex cut over a dataflow graph, with Boost.Graph's push-relabel max flow.
#include "tgc/Transforms/MinCut.h"

#include "llvm/ADT/ArrayRef.h"

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

/// The capacities the flow graph uses for `capacities` (kInfinite: never cut), and the one it
/// uses for infinity: more than all finite ones together, so that no minimum cut takes an
/// infinite edge, yet small enough that the flow out of the source (`sourceEdges` infinite
/// edges, which push-relabel pushes and sums first) fits int64. Finite capacities whose total
/// would not allow that are scaled down (rounding up, so none becomes free).
static int64_t flowCapacities(llvm::ArrayRef<int64_t> capacities, size_t sourceEdges,
                              llvm::SmallVectorImpl<int64_t> &scaled) {
  const uint64_t limit = uint64_t(INT64_MAX) / (sourceEdges + 2);
  unsigned __int128 total = 0;
  for (int64_t capacity : capacities)
    if (capacity < MinCutGraph::kInfinite)
      total += uint64_t(capacity);
  // Each capacity rounds up by less than 1, so the scaled total is below total/scale + count.
  uint64_t scale = 1;
  while (total / scale + capacities.size() + 1 > limit && scale < (uint64_t(1) << 62))
    scale *= 2;
  int64_t finite = 0;
  for (int64_t capacity : capacities) {
    int64_t value =
        capacity >= MinCutGraph::kInfinite ? -1 : int64_t((uint64_t(capacity) + scale - 1) / scale);
    scaled.push_back(value);
    finite += std::max<int64_t>(value, 0);
  }
  int64_t infinite = finite + 1;
  for (int64_t &value : scaled)
    if (value < 0)
      value = infinite;
  return infinite;
}

std::optional<MinCutGraph::Cut> MinCutGraph::solve() const {
  unsigned numNodes = getNumNodes();
  SplitGraph split(numNodes);
  auto input = [](unsigned node) { return 2 * node; };
  auto output = [](unsigned node) { return 2 * node + 1; };
  llvm::SmallVector<int64_t> scaled;
  int64_t infinite = flowCapacities(capacities, sourceTies.size(), scaled);
  for (unsigned node = 0; node < numNodes; ++node)
    split.addEdge(input(node), output(node), scaled[node]);
  for (Use use : uses)
    split.addEdge(output(use.producer), input(use.user), infinite);
  for (unsigned node : sourceTies)
    split.addEdge(split.source, input(node), infinite);
  for (unsigned node : inputSinkTies)
    split.addEdge(input(node), split.sink, infinite);
  for (unsigned node : outputSinkTies)
    split.addEdge(output(node), split.sink, infinite);

  // Every cut is infinite when the sink is reachable through infinite edges alone; answer
  // before running the max flow.
  auto capacityMap = boost::get(boost::edge_capacity, split.graph);
  if (split.reachable(split.source,
                      [&](auto edge) { return capacityMap[edge] >= infinite; })[split.sink])
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
