import Foundation

/// Sizes, rates and durations as users type them: `500M`, `2GiB`, `7d`.
/// The one unit table of every option (docs/cli-contract.md, Units).
public enum Units {
    /// Size units as curl reads them (`--max-filesize`, `--limit-rate`):
    /// a bare letter is a power of 1024, as is the IEC `KiB`; only a unit
    /// spelled with a `B` after the SI letter (`kB`, `MB`) is a power of
    /// 1000. Looked up lowercased: case does not change a size.
    public static let sizeUnits: [String: UInt64] = [
        "": 1, "b": 1,
        "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40,
        "ki": 1 << 10, "mi": 1 << 20, "gi": 1 << 30, "ti": 1 << 40,
        "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
        "kb": 1_000, "mb": 1_000_000, "gb": 1_000_000_000, "tb": 1_000_000_000_000,
    ]

    /// Duration units in seconds. `M` alone is refused: it is a month to
    /// systemd and mega to sizes, and on `cache prune --max-age` a minute
    /// read where a month was meant deletes the cache.
    public static let durationUnits: [String: Double] = [
        "": 1, "s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 604800,
    ]

    /// A number of bytes, with an optional unit of `sizeUnits`.
    public static func parseSize(_ text: String) throws -> UInt64 {
        let t = text.trimmingWhitespace()
        let (number, suffix) = splitNumber(t)
        guard !number.isEmpty, let value = Double(number), value.isFinite, value >= 0 else {
            throw ImgWarmError.usage("invalid size '\(text)': expected a number of bytes with an optional unit (k, M, G, T or KiB, MiB, GiB, TiB: powers of 1024; kB, MB, GB, TB: powers of 1000), e.g. 500M or 2GB")
        }
        guard let m = sizeUnits[suffix.lowercased()] else {
            throw ImgWarmError.usage("invalid size '\(text)': unknown unit '\(suffix)' (k, M, G, T or KiB, MiB, GiB, TiB are powers of 1024; kB, MB, GB, TB powers of 1000)")
        }
        let bytes = (value * Double(m)).rounded()
        guard bytes < 1.8e19 else {
            throw ImgWarmError.usage("invalid size '\(text)': too large")
        }
        if suffix.isEmpty && number.contains(".") {
            throw ImgWarmError.usage("invalid size '\(text)': a byte count must be a whole number")
        }
        return UInt64(bytes)
    }

    /// Seconds, from a number with an optional unit of `durationUnits`
    /// (a bare number is seconds). Uppercase is accepted for every unit
    /// but `M`.
    public static func parseDuration(_ text: String) throws -> Double {
        let t = text.trimmingWhitespace()
        let (number, suffix) = splitNumber(t)
        let hint = "use s, m or min, h, d or w: 1min for a minute, 30d for a month"
        guard !number.isEmpty, let value = Double(number), value.isFinite, value >= 0 else {
            throw ImgWarmError.usage("invalid duration '\(text)': expected a number with an optional unit (\(hint))")
        }
        guard suffix != "M", let m = durationUnits[suffix.lowercased()] else {
            let why = suffix == "M" ? "'M' could mean minutes or months" : "unknown unit '\(suffix)'"
            throw ImgWarmError.usage("invalid duration '\(text)': \(why) (\(hint))")
        }
        return value * m
    }

    /// `1.5 MiB`-style text for summaries.
    public static func formatBytes(_ bytes: UInt64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var v = Double(bytes)
        var i = 0
        while v >= 1024 && i < units.count - 1 {
            v /= 1024
            i += 1
        }
        if i == 0 { return "\(bytes) B" }
        return String(format: "%.1f %@", v, units[i])
    }

    private static func splitNumber(_ t: String) -> (String, String) {
        var idx = t.startIndex
        while idx < t.endIndex, t[idx].isNumber || t[idx] == "." { idx = t.index(after: idx) }
        return (String(t[..<idx]), String(t[idx...]).trimmingWhitespace())
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s.removeFirst() }
        while let l = s.last, l.isWhitespace { s.removeLast() }
        return String(s)
    }
}
