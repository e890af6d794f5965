/// Hexadecimal, both ways: digests as the layouts name files (lowercase,
/// two digits a byte), numbers padded to a width (temp names, UUIDs,
/// escapes), and the value of a digit read from a URL or a name.
package enum Hex {
    /// The ASCII digit of the low four bits of `nibble`: arithmetic, not a
    /// table (a global array costs a lazy-initialisation check and a bounds
    /// check per digit: 2.7 k instructions for one MD5's 32 digits).
    @inline(__always)
    package static func digit(_ nibble: UInt8, uppercase: Bool = false) -> UInt8 {
        let n = nibble & 0x0F
        return n < 10 ? 0x30 + n : (uppercase ? 0x37 : 0x57) + n
    }

    /// Two digits a byte, in order: `md5().hex()`, `sha256().hex()`.
    package static func encode<Bytes: Sequence>(_ bytes: Bytes, uppercase: Bool = false) -> String where Bytes.Element == UInt8 {
        if let fast = bytes.withContiguousStorageIfAvailable({ encode(UnsafeBufferPointer(rebasing: $0[...]), uppercase: uppercase) }) {
            return fast
        }
        return encode(Array(bytes), uppercase: uppercase)
    }

    private static func encode(_ bytes: UnsafeBufferPointer<UInt8>, uppercase: Bool) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { out in
            for (i, b) in bytes.enumerated() {
                out[2 * i] = digit(b >> 4, uppercase: uppercase)
                out[2 * i + 1] = digit(b, uppercase: uppercase)
            }
            return bytes.count * 2
        }
    }

    /// `value` in hex, at least `digits` wide (zeros in front).
    package static func padded<T: BinaryInteger>(_ value: T, digits: Int, uppercase: Bool = false) -> String {
        let s = String(value, radix: 16, uppercase: uppercase)
        return String(repeating: "0", count: max(0, digits - s.count)) + s
    }

    /// The value of one hex digit, either case; nil for anything else.
    package static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        case 0x61...0x66: return c - 0x61 + 10
        default: return nil
        }
    }
}
