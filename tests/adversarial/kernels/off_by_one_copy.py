# Block copy (problem 25) that copies from the neighbouring source block: byte-exact check.
def solve(kv_cache, block_mapping):
    src = (block_mapping[:, 0] + 1) % kv_cache.shape[2]
    kv_cache[:, :, block_mapping[:, 1]] = kv_cache[:, :, src]
    return kv_cache
