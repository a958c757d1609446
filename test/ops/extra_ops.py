"""Samples for core ATen ops that no OpInfo sample reaches (see run_opinfo.py): backward
ops, random and factory ops, symbolic-size queries. Each entry calls the op through
torch.ops.aten, so the exported core IR holds exactly that op. The entries have the part
of OpInfo's interface run_opinfo.py uses."""
import torch

aten = torch.ops.aten


class Sample:
    def __init__(self, input, *args, **kwargs):
        self.input, self.args, self.kwargs = input, args, kwargs


class Entry:
    def __init__(self, name, fn, samples, dtypes=(torch.float32, torch.bfloat16),
                 dynamic=False, training_ir=False):
        self.name, self.variant_test_name = name, "tgc"
        self.aten_name = name.split(".")[0]
        self.dynamic = dynamic  # export with every size symbolic
        self.training_ir = training_ir  # compile the training IR (out= overloads live there)
        self.op, self._samples, self._dtypes = fn, samples, set(dtypes)

    def supported_dtypes(self, device):
        return self._dtypes

    def sample_inputs(self, device, dtype, requires_grad=False):
        return iter(self._samples(dtype))


def _r(*shape, dtype=torch.float32):
    return torch.randn(*shape).to(dtype)


def _conv_bwd(dt):
    x, w = _r(2, 3, 8, 8, dtype=dt), _r(4, 3, 3, 3, dtype=dt)
    g = _r(2, 4, 8, 8, dtype=dt)
    yield Sample(g, x, w, [4], [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [True, True, True])
    g2 = _r(2, 4, 4, 4, dtype=dt)
    yield Sample(g2, x, w, None, [2, 2], [1, 1], [1, 1], False, [0, 0], 1,
                 [True, True, False])
    xg, wg = _r(2, 4, 6, 6, dtype=dt), _r(4, 2, 3, 3, dtype=dt)
    yield Sample(_r(2, 4, 4, 4, dtype=dt), xg, wg, [4], [1, 1], [0, 0], [1, 1], False,
                 [0, 0], 2, [True, True, True])


def _max_pool_bwd(dt):
    x = _r(2, 3, 8, 8, dtype=dt)
    out, idx = aten.max_pool2d_with_indices(x, [2, 2], [2, 2])
    yield Sample(_r(*out.shape, dtype=dt), x, [2, 2], [2, 2], [0, 0], [1, 1], False, idx)
    out, idx = aten.max_pool2d_with_indices(x, [3, 3], [2, 2], [1, 1])
    yield Sample(_r(*out.shape, dtype=dt), x, [3, 3], [2, 2], [1, 1], [1, 1], False, idx)


def _avg_pool_bwd(dt):
    x = _r(2, 3, 8, 8, dtype=dt)
    yield Sample(_r(2, 3, 4, 4, dtype=dt), x, [2, 2], [2, 2], [0, 0], False, True, None)
    yield Sample(_r(2, 3, 4, 4, dtype=dt), x, [3, 3], [2, 2], [1, 1], False, False, None)


def _adaptive_bwd(dt):
    x = _r(2, 3, 8, 8, dtype=dt)
    yield Sample(_r(2, 3, 4, 4, dtype=dt), x)
    yield Sample(_r(2, 3, 1, 1, dtype=dt), x)


def _layer_norm_bwd(dt):
    x, w, b = _r(4, 6, 8, dtype=dt), _r(8, dtype=dt), _r(8, dtype=dt)
    _, mean, rstd = aten.native_layer_norm(x.float(), [8], w.float(), b.float(), 1e-5)
    yield Sample(_r(4, 6, 8, dtype=dt), x, [8], mean, rstd, w, b, [True, True, True])
    yield Sample(_r(4, 6, 8, dtype=dt), x, [8], mean, rstd, None, None, [True, False, False])


def _group_norm_bwd(dt):
    x, w = _r(2, 6, 4, 4, dtype=dt), _r(6, dtype=dt)
    _, mean, rstd = aten.native_group_norm(x.float(), w.float(), None, 2, 6, 16, 3, 1e-5)
    yield Sample(_r(2, 6, 4, 4, dtype=dt), x, mean, rstd, w, 2, 6, 16, 3, [True, True, True])


def _embedding_bwd(dt):
    idx = torch.randint(0, 10, (4, 5))
    yield Sample(_r(4, 5, 3, dtype=dt), idx, 10, -1, False)
    yield Sample(_r(4, 5, 3, dtype=dt), idx, 10, 2, False)


def _bn_legit(dt):
    x = _r(4, 3, 5, 5, dtype=dt)
    yield Sample(x, _r(3, dtype=dt), _r(3, dtype=dt), torch.zeros(3, dtype=dt),
                 torch.ones(3, dtype=dt), True, 0.1, 1e-5)


def _bn_no_stats(dt):
    x = _r(4, 3, 5, 5, dtype=dt)
    yield Sample(x, _r(3, dtype=dt), _r(3, dtype=dt), True, 0.1, 1e-5)


def _bn_no_training(dt):
    x = _r(4, 3, 5, 5, dtype=dt)
    yield Sample(x, _r(3, dtype=dt), _r(3, dtype=dt), _r(3, dtype=dt),
                 torch.rand(3, dtype=dt) + 0.5, 0.1, 1e-5)


def _factory(dt):
    # The tensor argument only gives the program an input; the factory op's result is
    # compared (in shape and dtype where it is random).
    yield Sample(_r(3, dtype=dt))


def _dropout(dt):
    yield Sample(_r(8, 16, dtype=dt), 0.5, True)
    yield Sample(_r(8, 16, dtype=dt), 0.0, True)


def _sym(dt):
    yield Sample(_r(3, 4, dtype=dt))


def _local_scalar(dt):
    yield Sample(_r(1, dtype=dt))


def _col2im(dt):
    # Columns of unfold (kernel 2x3, dilation 1x2, padding 1x0, stride 2x1) of a 3x5x6
    # image, with and without a batch.
    yield Sample(_r(2, 3 * 6, 3 * 2, dtype=dt), [5, 6], [2, 3], [1, 2], [1, 0], [2, 1])
    yield Sample(_r(2 * 4, 9, dtype=dt), [4, 4], [2, 2], [1, 1], [0, 0], [1, 1])


def _binary(dt):
    yield Sample(_r(3, 4, dtype=dt), _r(3, 4, dtype=dt))


def _image(dt):
    yield Sample(_r(2, 3, 5, 6, dtype=dt))


def _volume(dt):
    yield Sample(_r(2, 3, 4, 5, 6, dtype=dt))


def _resample2d(dt):
    x = _r(2, 3, 5, 6, dtype=dt)
    yield Sample(x, [7, 9], False, None)
    yield Sample(x, [3, 4], True, None)
    yield Sample(x, None, False, [1.7, 2.0])


def _resample3d(dt):
    x = _r(2, 3, 4, 5, 6, dtype=dt)
    yield Sample(x, [6, 3, 8], False, None)
    yield Sample(x, [2, 7, 5], True, None)
    yield Sample(x, None, False, [1.5, 2.0, 0.5])


def _norm_samples(dt):
    x = _r(3, 4, 5, dtype=dt)
    x[1] = 0  # an all-zero slice
    yield Sample(x, 2, [2], True, None)
    yield Sample(x, float("inf"), None, False, None)
    yield Sample(x, 1.5, [0, 2], False, None)
    yield Sample(x, 0, [1], False, torch.float32)


def _einsum_pairs(dt):
    yield Sample(_r(2, 3, 4, dtype=dt), _r(2, 4, 5, dtype=dt), "bij,bjk->bik")
    yield Sample(_r(2, 4, 3, 8, dtype=dt), _r(2, 4, 6, 8, dtype=dt), "bhqd,bhkd->bhqk")
    yield Sample(_r(3, 2, 4, dtype=dt), _r(5, 4, dtype=dt), "...ij,kj->...ik")
    yield Sample(_r(3, dtype=dt), _r(4, dtype=dt), "i,j->ij")


def _einsum_others(dt):
    yield Sample(_r(3, 4, dtype=dt), "ij->ji")
    yield Sample(_r(2, 3, 4, dtype=dt), "ijk->")
    yield Sample(_r(2, 3, dtype=dt), _r(4, 3, 5, dtype=dt), _r(2, 5, dtype=dt), "bn,anm,bm->ba")
    yield Sample(_r(2, 1, 3, 4, dtype=dt), _r(5, 4, 6, dtype=dt), "...ij,...jk")


def _ints(dt):
    yield Sample(torch.randint(-50, 50, (4, 5)))


def _scatter_value(dt):
    yield Sample(_r(4, 5, dtype=dt), 1, torch.randint(0, 5, (4, 2)), 2.5)


def _embedding_bag(dt):
    w = _r(10, 3, dtype=dt)
    idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 0, 7])
    # weight, indices, offsets, scale_grad_by_freq, mode (0 sum, 1 mean, 2 max), sparse,
    # per_sample_weights, include_last_offset, padding_idx; bag 1 is empty. The runner
    # takes the first four.
    offsets = torch.tensor([0, 3, 3, 6])
    yield Sample(w, idx, offsets, False, 0, False, None, False, -1)
    yield Sample(w, idx, offsets, False, 2, False, None, False, 4)
    yield Sample(w, idx, offsets, False, 0, False, _r(10, dtype=dt), False, -1)
    yield Sample(w, idx, torch.tensor([0, 2, 5, 10]), False, 1, False, None, True, 2)


def extra_ops():
    f32 = (torch.float32,)
    i64 = (torch.int64,)
    return [
        Entry("reflection_pad2d", lambda x: aten.reflection_pad2d(x, [2, 1, 1, 3]), _image),
        Entry("reflection_pad3d", lambda x: aten.reflection_pad3d(x, [1, 2, 2, 1, 1, 0]),
              _volume),
        Entry("replication_pad3d", lambda x: aten.replication_pad3d(x, [1, 2, 0, 3, 2, 1]),
              _volume),
        Entry("upsample_nearest2d.vec", lambda x: aten.upsample_nearest2d.vec(x, [7, 9], None),
              _image),
        # Decomposed in the core IR: the training IR holds them.
        Entry("upsample_bicubic2d.vec", lambda x, *a: aten.upsample_bicubic2d.vec(x, *a),
              _resample2d, training_ir=True),
        Entry("upsample_trilinear3d.vec", lambda x, *a: aten.upsample_trilinear3d.vec(x, *a),
              _resample3d, training_ir=True),
        Entry("linalg_vector_norm", lambda x, *a: aten.linalg_vector_norm(x, *a[:3], dtype=a[3]),
              _norm_samples, training_ir=True),
        # einsum is decomposed in the core IR: the training IR holds it.
        Entry("einsum", lambda *a: aten.einsum(a[-1], list(a[:-1])), _einsum_pairs,
              training_ir=True),
        Entry("einsum.more", lambda *a: aten.einsum(a[-1], list(a[:-1])), _einsum_others,
              training_ir=True),
        Entry("unbind.int", lambda x: aten.unbind.int(x, 1), _volume, training_ir=True),
        Entry("upsample_nearest3d.vec", lambda x, s, _, f: aten.upsample_nearest3d.vec(x, s, f),
              _resample3d, training_ir=True),
        Entry("bitwise_and.Scalar", lambda x: aten.bitwise_and.Scalar(x, 12), _ints, i64),
        Entry("bitwise_or.Scalar", lambda x: aten.bitwise_or.Scalar(x, 5), _ints, i64),
        Entry("bitwise_xor.Scalar", lambda x: aten.bitwise_xor.Scalar(x, -3), _ints, i64),
        Entry("div.Scalar_mode", lambda x: aten.div.Scalar_mode(x, 3, rounding_mode="floor"),
              _image),
        Entry("col2im", lambda x, *a: aten.col2im(x, *a), _col2im),
        Entry("atan2.out", lambda a, b: aten.atan2.out(a, b, out=torch.empty_like(a)),
              _binary, training_ir=True),
        Entry("scatter.value", lambda *a: aten.scatter.value(*a), _scatter_value),
        Entry("convolution_backward", lambda *a: aten.convolution_backward(*a)
              if a[-1][2] else aten.convolution_backward(*a)[:2], _conv_bwd),
        Entry("max_pool2d_with_indices_backward",
              lambda *a: aten.max_pool2d_with_indices_backward(*a), _max_pool_bwd),
        Entry("avg_pool2d_backward", lambda *a: aten.avg_pool2d_backward(*a), _avg_pool_bwd),
        Entry("_adaptive_avg_pool2d_backward",
              lambda *a: aten._adaptive_avg_pool2d_backward(*a), _adaptive_bwd),
        Entry("native_layer_norm_backward",
              lambda *a: tuple(t for t in aten.native_layer_norm_backward(*a)
                               if t is not None), _layer_norm_bwd),
        Entry("native_group_norm_backward",
              lambda *a: aten.native_group_norm_backward(*a), _group_norm_bwd),
        Entry("embedding_dense_backward",
              lambda *a: aten.embedding_dense_backward(*a), _embedding_bwd),
        # The training IR keeps the op that updates the running statistics in place.
        Entry("_native_batch_norm_legit",
              lambda *a: aten._native_batch_norm_legit(*a), _bn_legit, training_ir=True),
        Entry("_embedding_bag", lambda *a: aten._embedding_bag(*a)[0], _embedding_bag),
        Entry("_native_batch_norm_legit.no_stats",
              lambda *a: aten._native_batch_norm_legit.no_stats(*a), _bn_no_stats),
        Entry("_native_batch_norm_legit_no_training",
              lambda *a: aten._native_batch_norm_legit_no_training(*a), _bn_no_training),
        Entry("native_dropout", lambda *a: aten.native_dropout(*a), _dropout),
        Entry("rand", lambda x: x + aten.rand([3], dtype=x.dtype), _factory),
        Entry("randn", lambda x: x + aten.randn([3], dtype=x.dtype), _factory),
        Entry("randperm", lambda x: aten.randperm(7) + x.long().sum(), _factory, f32),
        Entry("empty.memory_format", lambda x: aten.empty.memory_format(
            [2, 3], dtype=x.dtype).fill_(1) + x.sum(), _factory),
        Entry("empty_strided", lambda x: aten.empty_strided(
            [2, 3], [1, 2], dtype=x.dtype).fill_(2) + x.sum(), _factory),
        Entry("scalar_tensor", lambda x: x * aten.scalar_tensor(2.5, dtype=x.dtype),
              _factory),
        Entry("full", lambda x: x + aten.full([2, 3], 1.5, dtype=x.dtype)[0], _factory),
        Entry("fill.Scalar", lambda x: aten.fill.Scalar(x, 0.75), _factory),
        Entry("alias", lambda x: aten.alias(x) * 2, _factory),
        Entry("sym_size", lambda x: x * aten.sym_size.int(x, 1), _sym,
              dynamic=True),
        Entry("sym_numel", lambda x: x * aten.sym_numel(x), _sym,
              dynamic=True),
        Entry("sym_stride", lambda x: x * aten.sym_stride.int(x, 0), _sym,
              dynamic=True),
        Entry("sym_storage_offset", lambda x: x + aten.sym_storage_offset(x), _sym,
              dynamic=True),
        Entry("_local_scalar_dense", lambda x: x * 0 + aten._local_scalar_dense(x), _local_scalar,
              f32),
    ]
