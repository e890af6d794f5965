/// Text from servers and manifests (URLs, Content-Type, Location, curl's
/// error text, reasons) made safe for a terminal or a log line. A hostile
/// server could otherwise send `ESC]0;…BEL` (retitles the terminal),
/// `ESC[2J` (clears it), or a line break that forges a log line of its own.
///
/// The one rule, applied by every sink (stderr lines, `-v` lines, the
/// progress printer's lines, `cache failed`): TAB, LF and CR become a space
/// (messages are one line); every other C0 control, DEL and every C1
/// control becomes `\xNN`; the bidirectional overrides and isolates (which
/// reorder what a terminal shows, "Trojan Source") become `\u{NNNN}`.
/// Everything else, non-ASCII letters included, is kept.
public enum TerminalText {
    /// Manifest and report text quoted in a message: at most `max` characters, and
    /// control characters (C0, DEL, C1) written as `\u{1B}`, so that a
    /// manifest line cannot send terminal escape sequences or forge extra
    /// lines through imgwarm's stderr (found by scripts/fuzz.sh).
    package static func clip(_ s: String, _ max: Int = 80) -> String {
        var out = ""
        var count = 0
        for scalar in s.unicodeScalars {
            if count == max { return out + "…" }
            count += 1
            if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `text` escaped as described above.
    public static func escaped(_ text: String) -> String {
        // Fast path: printable ASCII, nearly every line.
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return text }
        var out = String.UnicodeScalarView()
        for s in text.unicodeScalars {
            switch s.value {
            case 0x09, 0x0A, 0x0D:
                out.append(" ")
            case 0x00..<0x20, 0x7F, 0x80..<0xA0:
                out.append(contentsOf: "\\x".unicodeScalars)
                out.append(contentsOf: Hex.padded(s.value, digits: 2, uppercase: true).unicodeScalars)
            case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069:
                out.append(contentsOf: "\\u{".unicodeScalars)
                out.append(contentsOf: Hex.padded(s.value, digits: 4, uppercase: true).unicodeScalars)
                out.append("}")
            default:
                out.append(s)
            }
        }
        return String(out)
    }

    /// `escaped`, without the spaces it leaves at either end.
    public static func oneLine(_ text: String) -> String {
        let e = escaped(text)
        guard e.utf8.first == 0x20 || e.utf8.last == 0x20 else { return e }
        let u = Array(e.utf8)
        guard let first = u.firstIndex(where: { $0 != 0x20 }), let last = u.lastIndex(where: { $0 != 0x20 }) else { return "" }
        return String(decoding: u[first...last], as: UTF8.self)
    }
}
