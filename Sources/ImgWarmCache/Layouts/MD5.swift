/// MD5 (RFC 1321) of bytes in memory, as two little-endian 64-bit words
/// (the digest's bytes 0-7 and 8-15).
///
/// Why not swift-crypto's `Insecure.MD5`: every manifest entry is hashed
/// once for its cache file name, and for a key of one 64-byte block its
/// hasher (a heap-allocated context, generic `DataProtocol` input, a
/// digest copied out) cost about 2,750 instructions against about 700
/// here. `MD5Tests` compares the two on every length up to a few blocks
/// and on random input; other callers keep `Insecure.MD5`.
package enum MD5 {
    package static func digest(_ bytes: UnsafeBufferPointer<UInt8>) -> (UInt64, UInt64) {
        var state: (UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476)
        let count = bytes.count
        var offset = 0
        if let base = bytes.baseAddress {
            while count - offset >= 64 {
                compress(&state, UnsafeRawPointer(base + offset))
                offset += 64
            }
        }
        // The rest, 0x80, zeros, and the length in bits: one or two blocks.
        let rest = count - offset
        withUnsafeTemporaryAllocation(byteCount: 128, alignment: 8) { tail in
            tail.initializeMemory(as: UInt8.self, repeating: 0)
            if rest > 0, let base = bytes.baseAddress {
                tail.baseAddress!.copyMemory(from: base + offset, byteCount: rest)
            }
            tail[rest] = 0x80
            let blocks = rest < 56 ? 1 : 2
            tail.storeBytes(of: (UInt64(count) &* 8).littleEndian, toByteOffset: blocks * 64 - 8, as: UInt64.self)
            compress(&state, UnsafeRawPointer(tail.baseAddress!))
            if blocks == 2 { compress(&state, UnsafeRawPointer(tail.baseAddress! + 64)) }
        }
        return (UInt64(state.0) | UInt64(state.1) << 32, UInt64(state.2) | UInt64(state.3) << 32)
    }

    @inline(__always) private static func rotl(_ x: UInt32, _ n: UInt32) -> UInt32 { x &<< n | x &>> (32 &- n) }
    @inline(__always) private static func f(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ m: UInt32, _ k: UInt32,
                                            _ s: UInt32) -> UInt32 {
        b &+ rotl(a &+ ((b & c) | (~b & d)) &+ m &+ k, s)
    }
    @inline(__always) private static func g(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ m: UInt32, _ k: UInt32,
                                            _ s: UInt32) -> UInt32 {
        b &+ rotl(a &+ ((b & d) | (c & ~d)) &+ m &+ k, s)
    }
    @inline(__always) private static func h(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ m: UInt32, _ k: UInt32,
                                            _ s: UInt32) -> UInt32 {
        b &+ rotl(a &+ (b ^ c ^ d) &+ m &+ k, s)
    }
    @inline(__always) private static func i(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ m: UInt32, _ k: UInt32,
                                            _ s: UInt32) -> UInt32 {
        b &+ rotl(a &+ (c ^ (b | ~d)) &+ m &+ k, s)
    }

    /// One 64-byte block: RFC 1321 section 3.4, the 64 steps written out
    /// (constants: floor(abs(sin(i + 1)) * 2^32)).
    private static func compress(_ state: inout (UInt32, UInt32, UInt32, UInt32), _ block: UnsafeRawPointer) {
        @inline(__always) func m(_ w: Int) -> UInt32 {
            UInt32(littleEndian: block.loadUnaligned(fromByteOffset: w * 4, as: UInt32.self))
        }
        var (a, b, c, d) = state
        a = f(a, b, c, d, m(0), 0xd76aa478, 7)
        d = f(d, a, b, c, m(1), 0xe8c7b756, 12)
        c = f(c, d, a, b, m(2), 0x242070db, 17)
        b = f(b, c, d, a, m(3), 0xc1bdceee, 22)
        a = f(a, b, c, d, m(4), 0xf57c0faf, 7)
        d = f(d, a, b, c, m(5), 0x4787c62a, 12)
        c = f(c, d, a, b, m(6), 0xa8304613, 17)
        b = f(b, c, d, a, m(7), 0xfd469501, 22)
        a = f(a, b, c, d, m(8), 0x698098d8, 7)
        d = f(d, a, b, c, m(9), 0x8b44f7af, 12)
        c = f(c, d, a, b, m(10), 0xffff5bb1, 17)
        b = f(b, c, d, a, m(11), 0x895cd7be, 22)
        a = f(a, b, c, d, m(12), 0x6b901122, 7)
        d = f(d, a, b, c, m(13), 0xfd987193, 12)
        c = f(c, d, a, b, m(14), 0xa679438e, 17)
        b = f(b, c, d, a, m(15), 0x49b40821, 22)
        a = g(a, b, c, d, m(1), 0xf61e2562, 5)
        d = g(d, a, b, c, m(6), 0xc040b340, 9)
        c = g(c, d, a, b, m(11), 0x265e5a51, 14)
        b = g(b, c, d, a, m(0), 0xe9b6c7aa, 20)
        a = g(a, b, c, d, m(5), 0xd62f105d, 5)
        d = g(d, a, b, c, m(10), 0x02441453, 9)
        c = g(c, d, a, b, m(15), 0xd8a1e681, 14)
        b = g(b, c, d, a, m(4), 0xe7d3fbc8, 20)
        a = g(a, b, c, d, m(9), 0x21e1cde6, 5)
        d = g(d, a, b, c, m(14), 0xc33707d6, 9)
        c = g(c, d, a, b, m(3), 0xf4d50d87, 14)
        b = g(b, c, d, a, m(8), 0x455a14ed, 20)
        a = g(a, b, c, d, m(13), 0xa9e3e905, 5)
        d = g(d, a, b, c, m(2), 0xfcefa3f8, 9)
        c = g(c, d, a, b, m(7), 0x676f02d9, 14)
        b = g(b, c, d, a, m(12), 0x8d2a4c8a, 20)
        a = h(a, b, c, d, m(5), 0xfffa3942, 4)
        d = h(d, a, b, c, m(8), 0x8771f681, 11)
        c = h(c, d, a, b, m(11), 0x6d9d6122, 16)
        b = h(b, c, d, a, m(14), 0xfde5380c, 23)
        a = h(a, b, c, d, m(1), 0xa4beea44, 4)
        d = h(d, a, b, c, m(4), 0x4bdecfa9, 11)
        c = h(c, d, a, b, m(7), 0xf6bb4b60, 16)
        b = h(b, c, d, a, m(10), 0xbebfbc70, 23)
        a = h(a, b, c, d, m(13), 0x289b7ec6, 4)
        d = h(d, a, b, c, m(0), 0xeaa127fa, 11)
        c = h(c, d, a, b, m(3), 0xd4ef3085, 16)
        b = h(b, c, d, a, m(6), 0x04881d05, 23)
        a = h(a, b, c, d, m(9), 0xd9d4d039, 4)
        d = h(d, a, b, c, m(12), 0xe6db99e5, 11)
        c = h(c, d, a, b, m(15), 0x1fa27cf8, 16)
        b = h(b, c, d, a, m(2), 0xc4ac5665, 23)
        a = i(a, b, c, d, m(0), 0xf4292244, 6)
        d = i(d, a, b, c, m(7), 0x432aff97, 10)
        c = i(c, d, a, b, m(14), 0xab9423a7, 15)
        b = i(b, c, d, a, m(5), 0xfc93a039, 21)
        a = i(a, b, c, d, m(12), 0x655b59c3, 6)
        d = i(d, a, b, c, m(3), 0x8f0ccc92, 10)
        c = i(c, d, a, b, m(10), 0xffeff47d, 15)
        b = i(b, c, d, a, m(1), 0x85845dd1, 21)
        a = i(a, b, c, d, m(8), 0x6fa87e4f, 6)
        d = i(d, a, b, c, m(15), 0xfe2ce6e0, 10)
        c = i(c, d, a, b, m(6), 0xa3014314, 15)
        b = i(b, c, d, a, m(13), 0x4e0811a1, 21)
        a = i(a, b, c, d, m(4), 0xf7537e82, 6)
        d = i(d, a, b, c, m(11), 0xbd3af235, 10)
        c = i(c, d, a, b, m(2), 0x2ad7d2bb, 15)
        b = i(b, c, d, a, m(9), 0xeb86d391, 21)
        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d)
    }
}
