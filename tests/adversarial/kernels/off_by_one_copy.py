# Block copy (problem 25) that copies from the neighbouring source block: byte-exact check.
def solve(src_k, src_v, dst_k, dst_v, block_mapping):
    src = (block_mapping[:, 0] + 1) % src_k.shape[0]
    dst_k[block_mapping[:, 1]] = src_k[src]
    dst_v[block_mapping[:, 1]] = src_v[src]
    return dst_k, dst_v
