"""kscope_record: name tensors for `kscope record` traces (docs/record.md).

    import kscope_record
    with kscope_record.names(input=x, rois=r, output=y):
        y = torchvision.ops.roi_align(x, r, ...)   # launches inside are recorded with names

Every launch that runs inside the block sees the tensors' memory by these names, with
their shapes and dtypes, instead of as allocN. Outside `kscope record` (no recorder in
the process) it does nothing. Pure Python: the recorder library, injected by kscope
record, exports kscope_record_name / kscope_record_unname, called here through ctypes.
An object other than a torch tensor works when it has data_ptr(), shape, dtype and
element_size() (or pass (pointer, bytes) and optionally dtype and shape with name()).
"""
import contextlib
import ctypes
import os

_lib = None


def _recorder():
    """The injected library, or None outside kscope record."""
    global _lib
    if _lib is None:
        path = os.environ.get("KS_RECORD_LIB")
        _lib = False
        if path and os.environ.get("CUDA_INJECTION64_PATH") == path:
            try:
                lib = ctypes.CDLL(path)
                lib.kscope_record_name.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_char_p,
                                                   ctypes.c_char_p, ctypes.c_int,
                                                   ctypes.POINTER(ctypes.c_int64)]
                lib.kscope_record_name.restype = ctypes.c_int
                lib.kscope_record_unname.argtypes = [ctypes.c_void_p]
                lib.kscope_record_unname.restype = None
                _lib = lib
            except OSError:
                _lib = False
    return _lib or None


def active():
    """True under kscope record."""
    return _recorder() is not None


def name(label, ptr, nbytes, dtype="float32", shape=()):
    """Names [ptr, ptr + nbytes) as `label` with a dtype ("float32", "int64", ...) and a
    C-order shape; raises ValueError for a name the recorder refuses."""
    lib = _recorder()
    if lib is None:
        return
    dims = (ctypes.c_int64 * max(len(shape), 1))(*[int(d) for d in shape])
    if lib.kscope_record_name(ctypes.c_void_p(int(ptr)), int(nbytes), str(label).encode(), str(dtype).encode(),
                              len(shape), dims) != 0:
        raise ValueError("kscope_record: cannot name %s (%s, %s, %d bytes)" % (label, dtype, tuple(shape), nbytes))


def unname(ptr):
    lib = _recorder()
    if lib is not None:
        lib.kscope_record_unname(ctypes.c_void_p(int(ptr)))


class Next:
    """The memory PyTorch's caching allocator hands the next tensor of this shape and dtype
    on this device: an output a library allocates inside the call (torchvision's roi_align)
    can then be named before it exists. A probe tensor is allocated and freed at once; the
    allocator gives its block to the next request of that size. After the call, check
    placed(y): if another allocation took the block first, the name covered other memory
    and the trace must not be trusted (raise or retry).

        out = kscope_record.Next((K, C, 7, 7))
        with kscope_record.names(input=x, rois=r, output=out):
            y = torchvision.ops.roi_align(x, r, (7, 7), 1.0, 2, True)
        assert out.placed(y)
    """

    def __init__(self, shape, dtype=None, device="cuda"):
        import torch  # only when used: the module itself needs no torch

        probe = torch.empty(tuple(shape), dtype=dtype or torch.float32, device=device)
        self.ptr, self.nbytes = probe.data_ptr(), probe.numel() * probe.element_size()
        self.dtype, self.shape = str(probe.dtype), tuple(probe.shape)
        del probe

    def placed(self, t):
        """True when tensor t lies where this placeholder was named."""
        return t.data_ptr() == self.ptr and t.numel() * t.element_size() == self.nbytes


def _describe(t):
    if isinstance(t, Next):
        return t.ptr, t.nbytes, t.dtype, t.shape
    if isinstance(t, tuple):
        ptr, nbytes = t[0], t[1]
        return ptr, nbytes, (t[2] if len(t) > 2 else "float32"), (t[3] if len(t) > 3 else ())
    if not t.is_contiguous():
        raise ValueError("kscope_record: name a contiguous tensor (call .contiguous() first)")
    return t.data_ptr(), t.numel() * t.element_size(), str(t.dtype), tuple(t.shape)


@contextlib.contextmanager
def names(**tensors):
    """Names each tensor (keyword = name) for the launches inside the block."""
    named = []
    try:
        for label, t in tensors.items():
            ptr, nbytes, dtype, shape = _describe(t)
            if nbytes == 0:
                continue
            name(label, ptr, nbytes, dtype, shape)
            named.append(ptr)
        yield
    finally:
        for ptr in named:
            unname(ptr)
