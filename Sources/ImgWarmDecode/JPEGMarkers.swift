/// The one walk over a JPEG's markers before its first scan, shared by
/// `ImageHeader.jpeg` (the size) and `DecodeMemory.jpegFrame` (what the
/// decoder will buffer): both must see the frame header libjpeg sees, or
/// a file could be sized by one and decoded at another size.
///
/// It skips what libjpeg skips between markers (libjpeg-turbo,
/// src/jdmarker.c, next_marker): any bytes other than 0xFF (counted as
/// "extraneous data", a warning), any run of 0xFF fill bytes, and a
/// stuffed 0xFF 0x00 pair. Markers without a length are SOI, EOI, RSTn
/// and TEM (jdmarker.c, read_markers). A walk that stopped at the first
/// stray byte let a 9999x9999 progressive JPEG with one 0x00 after SOI be
/// sized as a header-less file while libjpeg decoded it in full.
enum JPEGMarkers {
    /// One marker segment: its code (the byte after 0xFF), the offset of
    /// its 0xFF, and its payload after the 2-byte length (empty for the
    /// markers without one).
    struct Segment {
        var marker: UInt8
        var offset: Int
        var payload: Range<Int>
    }

    /// Calls `body` for each marker after SOI up to and including the
    /// first SOS (or EOI), stopping early when `body` returns false or the
    /// data ends inside a segment's length. A segment whose payload runs
    /// past the data is still reported, cut to the data.
    static func walk(_ b: UnsafeRawBufferPointer, _ body: (Segment) -> Bool) {
        guard b.count >= 2, b[0] == 0xFF, b[1] == 0xD8 else { return }
        var i = 2
        while i < b.count {
            // next_marker: bytes other than 0xFF are discarded.
            while i < b.count && b[i] != 0xFF { i += 1 }
            let start = i
            // Then every 0xFF of a fill run; the byte after them is the code.
            while i < b.count && b[i] == 0xFF { i += 1 }
            guard i < b.count else { return }
            let marker = b[i]
            i += 1
            // 0xFF 0x00: stuffed data, discarded; look again.
            if marker == 0x00 { continue }
            if marker == 0x01 || (0xD0...0xD8).contains(marker) {
                guard body(Segment(marker: marker, offset: start, payload: i..<i)) else { return }
                continue
            }
            if marker == 0xD9 {
                _ = body(Segment(marker: marker, offset: start, payload: i..<i))
                return
            }
            guard i + 2 <= b.count else { return }
            let length = Int(b[i]) << 8 | Int(b[i + 1])
            // libjpeg fails on a length under 2 (JERR_BAD_LENGTH and the like).
            guard length >= 2 else { return }
            let end = min(b.count, i + length)
            guard body(Segment(marker: marker, offset: start, payload: (i + 2)..<max(i + 2, end))) else { return }
            if marker == 0xDA { return }
            i += length
        }
    }

    /// SOF0-SOF15 except DHT (C4), JPG (C8) and DAC (CC).
    static func isFrameHeader(_ marker: UInt8) -> Bool {
        (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
    }
}
