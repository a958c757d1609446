// A minimum vertex cut over a dataflow graph: the core of the training partitioner.
#ifndef TGC_TRANSFORMS_MINCUT_H
#define TGC_TRANSFORMS_MINCUT_H

#include "llvm/ADT/SmallVector.h"
#include <cstdint>
#include <limits>
#include <optional>

namespace tgc {

/// A dataflow graph whose nodes (values) each cost something to cut (to save), in the shape
/// AOTAutograd's min-cut rematerialization uses. Every node `v` is split into `v_in -> v_out` with
/// the node's capacity; a use of `u` by `v` is an infinite edge `u_out -> v_in`. Nodes tied to the
/// source are computed before the cut (forward); nodes whose input is tied to the sink must be
/// computed after it (backward); nodes whose output is tied to the sink must be available after it
/// (computed or saved).
///
/// A minimum cut separates the source from the sink at the least total capacity; the nodes whose
/// `in -> out` edge it cuts are the values to save. Of all minimum cuts, `solve` returns the one
/// whose source side is smallest (the values reachable from the source in the residual graph),
/// which saves values as early as possible: with equal costs it saves a producer's input and
/// recomputes the producer.
class MinCutGraph {
public:
  /// The capacity of a node that can never be cut (a scalar, or an edge).
  static constexpr int64_t kInfinite = std::numeric_limits<int64_t>::max() / 4;

  /// Adds a node with the given cut capacity (>= 0, or kInfinite); returns its index.
  unsigned addNode(int64_t capacity);
  /// `user` reads `producer`: `producer_out -> user_in`, infinite.
  void addUse(unsigned producer, unsigned user);
  /// `source -> node_in`, infinite: the node is available before the cut.
  void tieToSource(unsigned node);
  /// `node_in -> sink`, infinite: the node is computed after the cut.
  void tieInputToSink(unsigned node);
  /// `node_out -> sink`, infinite: the node's value is needed after the cut.
  void tieOutputToSink(unsigned node);

  unsigned getNumNodes() const { return capacities.size(); }
  int64_t getCapacity(unsigned node) const { return capacities[node]; }

  /// The outcome of a cut.
  struct Cut {
    /// Sum of the capacities of the cut nodes.
    int64_t cost = 0;
    /// Nodes whose `in -> out` edge is cut, in increasing index order.
    llvm::SmallVector<unsigned> cutNodes;
    /// Per node: whether `node_in` / `node_out` is on the source side.
    llvm::SmallVector<bool> inputOnSourceSide, outputOnSourceSide;
  };

  /// Computes the minimum cut with the smallest source side; std::nullopt when every cut is
  /// infinite (a path from source to sink through infinite edges only).
  std::optional<Cut> solve() const;

private:
  /// A use: `producer_out -> user_in`.
  struct Use {
    unsigned producer, user;
  };
  llvm::SmallVector<int64_t> capacities;
  llvm::SmallVector<Use> uses;
  llvm::SmallVector<unsigned> sourceTies, inputSinkTies, outputSinkTies;
};

} // namespace tgc

#endif // TGC_TRANSFORMS_MINCUT_H
