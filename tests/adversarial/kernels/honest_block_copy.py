# Honest: KV-cache block copy (problem 25), updating the cache in place.
def solve(kv_cache, block_mapping):
    kv_cache[:, :, block_mapping[:, 1]] = kv_cache[:, :, block_mapping[:, 0]]
    return kv_cache
