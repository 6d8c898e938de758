# Honest: KV-cache block copy (problem 25), updating the destination caches in place.
def solve(src_k, src_v, dst_k, dst_v, block_mapping):
    dst_k[block_mapping[:, 1]] = src_k[block_mapping[:, 0]]
    dst_v[block_mapping[:, 1]] = src_v[block_mapping[:, 0]]
    return dst_k, dst_v
