import Foundation
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// The key rule and the strict journal reader, by table.
///
/// `[a-z0-9_-]{1,120}`: square/okhttp,
/// okhttp/src/commonJvmAndroid/kotlin/okhttp3/internal/cache/DiskLruCache.kt
/// (`LEGAL_KEY_PATTERN`, checked by `validateKey`); coil-kt/coil,
/// coil-core/src/commonMain/kotlin/coil3/disk/DiskLruCache.kt and, at 2.7.0,
/// coil-base/src/main/java/coil/disk/DiskLruCache.kt (the same pair);
/// bumptech/glide,
/// third_party/disklrucache/src/main/java/com/bumptech/glide/disklrucache/DiskLruCache.java
/// (the class comment: "Each key must match the regex [a-z0-9_-]{1,120}";
/// this copy has no `validateKey`).
@Suite struct DiskLruJournalTests {
    @Test(arguments: [
        ("0123456789abcdef", true), ("a", true), ("a-b_c", true), (String(repeating: "a", count: 120), true),
        (String(repeating: "a", count: 121), false), ("", false), ("A", false), ("../x", false), ("/etc/passwd", false),
        ("a.b", false), ("a b", false), ("k\u{0}", false), ("ké", false), ("..", false), (".", false), ("a/b", false),
    ])
    func keyRule(key: String, valid: Bool) {
        #expect(DiskLruJournal.isValidKey(key) == valid, "\(key.debugDescription)")
        #expect((DiskLruJournal.valueFileName(key, 0) != nil) == valid)
    }

    static let glide = DiskLruJournal(appVersion: 1, valueCount: 1)
    static let coil = DiskLruJournal(appVersion: 3, valueCount: 2)
    static let head1 = "libcore.io.DiskLruCache\n1\n1\n1\n\n"
    static let head2 = "libcore.io.DiskLruCache\n1\n3\n2\n\n"

    /// Journals refused, with the line named and the reason.
    @Test(arguments: [
        (head1 + "CLEAN ../victim 1\n", 1, 6, "the key is not a DiskLruCache key"),
        (head1 + "CLEAN ok 1\nDIRTY /abs\n", 1, 7, "the key is not a DiskLruCache key"),
        (head1 + "REMOVE a\u{0}\n", 1, 6, "the key is not a DiskLruCache key"),
        (head1 + "READ A\n", 1, 6, "the key is not a DiskLruCache key"),
        (head1 + "READ \n", 1, 6, "the key is not a DiskLruCache key"),
        (head1 + "CLEAN k 9223372036854775807\nCLEAN j 1\n", 1, 7, "the entries' lengths add up to more than"),
        (head1 + "CLEAN k 9223372036854775808\n", 1, 6, "a length that is not a number"),
        (head1 + "CLEAN k -1\n", 1, 6, "a length that is not a number"),
        (head1 + "CLEAN k +1\n", 1, 6, "a length that is not a number"),
        (head1 + "CLEAN k\n", 1, 6, "not a journal line"),
        (head1 + "CLEAN k 1 2\n", 1, 6, "2 lengths where an entry has 1"),
        (head1 + "DIRTY k 1\n", 1, 6, "not a journal line"),
        (head1 + "UPDATE k\n", 1, 6, "not a journal line (CLEAN"),
        (head1 + "k\n", 1, 6, "not a journal line"),
        (head2 + "CLEAN k 9223372036854775807 1\n", 2, 6, "the lengths add up to more than"),
        (head2 + "CLEAN k 1\n", 2, 6, "1 length where an entry has 2"),
        ("libcore.io.DiskLruCache\n1\n2\n1\n\n", 1, 3, "header line \"2\""),
        ("libcore.io.DiskLruCache\n1\n", 1, 3, "the journal ends inside its header"),
    ])
    func refusedJournals(text: String, valueCount: Int, line: Int, reason: String) {
        let journal = valueCount == 1 ? Self.glide : Self.coil
        #expect {
            _ = try journal.parse(Array(text.utf8))
        } throws: { error in
            guard let corrupt = error as? DiskLruJournal.Corrupt else { return false }
            return corrupt.line == line && corrupt.reason.hasPrefix(reason)
        }
    }

    /// Journals read: a replaced entry's length counts once; REMOVE takes
    /// it out of the sum; a DIRTY edit's keys are the dead edits.
    @Test func acceptedJournals() throws {
        let c = try Self.glide.parse(Array((Self.head1 + "CLEAN k 9223372036854775000\nCLEAN k 9223372036854775000\n"
            + "REMOVE k\nCLEAN j 9223372036854775807\nDIRTY d\nREAD j\n").utf8))
        #expect(c.size == Int64.max)
        #expect(DiskLruJournal.deadEdits(c) == ["d"])
        #expect(DiskLruJournal.evictions(c, limit: 1, keep: { _ in false }).map(\.key) == ["j"])
        #expect(DiskLruJournal.evictions(c, limit: 1, keep: { $0 == "j" }).isEmpty)
    }

    /// CR LF line ends: the libraries' `StrictLineReader.readLine` drops a
    /// '\r' before the '\n' (bumptech/glide,
    /// third_party/disklrucache/src/main/java/com/bumptech/glide/disklrucache/StrictLineReader.java,
    /// `readLine`: `lineEnd = (i != pos && buf[i - 1] == CR) ? i - 1 : i`),
    /// so such a journal is the same journal; a '\r' elsewhere stays in its
    /// line (and is no key).
    @Test func crlfLineEndsAreTheLibrarysLineEnds() throws {
        let lf = Self.head1 + "CLEAN k 5\nDIRTY d\nREAD k\nCLEAN j 7\n"
        let crlf = lf.replacingOccurrences(of: "\n", with: "\r\n")
        #expect(try Self.glide.parse(Array(crlf.utf8)) == Self.glide.parse(Array(lf.utf8)))
        let tail = try Self.glide.parse(Array((Self.head1 + "CLEAN k 5\r\nREAD k\r").utf8))
        #expect(tail.unterminatedTail)
        #expect(tail.entries["k"]?.lengths == [5])
        #expect {
            _ = try Self.glide.parse(Array((Self.head1 + "CLEAN k\r 5\n").utf8))
        } throws: { ($0 as? DiskLruJournal.Corrupt)?.line == 6 }
    }

    /// Detection reads a folder's journal header with the journal's own
    /// rules (`readJournal`: each header line compared as a string,
    /// StrictLineReader dropping a '\r' before '\n').
    @Test func aHeaderIsReadAsTheJournalReadsIt() {
        func read(_ s: String) -> DiskLruJournal? { DiskLruJournal.readHeader(Array(s.utf8)) }
        #expect(read("libcore.io.DiskLruCache\n1\n3\n2\n\nCLEAN x 1 2\n") == DiskLruJournal(appVersion: 3, valueCount: 2))
        #expect(read("libcore.io.DiskLruCache\r\n1\r\n1\r\n1\r\n\r\n") == DiskLruJournal(appVersion: 1, valueCount: 1))
        #expect(read("libcore.io.DiskLruCache\n1\n03\n2\n\n") == nil)
        #expect(read("libcore.io.DiskLruCache\n1\n+3\n2\n\n") == nil)
        #expect(read("libcore.io.DiskLruCache\n1\n3\n0\n\n") == nil)
        #expect(read("libcore.io.DiskLruCache\n1\n3\n2\n") == nil)
        // What readHeader accepts, parse accepts with that app version and value count.
        let crlf = Array("libcore.io.DiskLruCache\r\n1\r\n1\r\n1\r\n\r\n".utf8)
        #expect((try? DiskLruJournal.readHeader(crlf)?.parse(crlf)) != nil)
    }
    /// The journal read in pieces (as `DiskLruIndex` reads the file, 64 KiB
    /// at a time) says what it says read whole, wherever the pieces end:
    /// inside a line, between a '\r' and its '\n', inside the header; and
    /// a refusal names the same line.
    @Test(arguments: [1, 2, 3, 5, 7, 31, 64, 1 << 16])
    func aJournalReadInPiecesIsTheJournalReadWhole(piece: Int) throws {
        func inPieces(_ journal: DiskLruJournal, _ text: String) throws -> DiskLruJournal.Contents {
            let bytes = Array(text.utf8)
            var reader = DiskLruJournal.Reader(journal)
            var start = 0
            while start < bytes.count {
                let end = min(start + piece, bytes.count)
                try bytes[start..<end].withUnsafeBytes { try reader.read($0) }
                start = end
            }
            return try reader.finish()
        }
        let lf = Self.head1 + "CLEAN k 5\nDIRTY d\nREAD k\nCLEAN j 7\nREMOVE j\nCLEAN j 9\nREAD k\n"
        let accepted = [lf, lf.replacingOccurrences(of: "\n", with: "\r\n"), lf + "READ k", lf + "READ j\r",
                        Self.head2 + "CLEAN k 1 2\nREAD k\nDIRTY x\n"]
        for text in accepted {
            let journal = text.hasPrefix(Self.head2) ? Self.coil : Self.glide
            let whole = try journal.parse(Array(text.utf8))
            #expect(try inPieces(journal, text) == whole, "\(text.debugDescription)")
        }
        #expect(try inPieces(Self.glide, lf + "READ k").unterminatedTail)
        #expect(try inPieces(Self.glide, lf).lruOrder == ["d", "j", "k"])
        let refused = [(Self.head1 + "CLEAN k 5\nREAD ../x\n", 7), ("libcore.io.DiskLruCache\n1\n2\n1\n\nCLEAN k 1\n", 3),
                       ("libcore.io.DiskLruCache\n1\n", 3)]
        for (text, line) in refused {
            #expect {
                _ = try inPieces(Self.glide, text)
            } throws: { ($0 as? DiskLruJournal.Corrupt)?.line == line }
        }
    }

    /// A line is at most `maxLineBytes` (64 KiB) before its '\n': one of
    /// exactly that many (a CLEAN line whose length has leading zeros,
    /// which Java's `Long.parseLong` reads) is read; one byte more is
    /// refused naming its line, fed whole or in pieces, ended or not.
    @Test(arguments: [1000, 1 << 16, 1 << 20])
    func aLineLongerThanTheLimitIsRefused(piece: Int) throws {
        let prefix = "CLEAN k "
        let longest = prefix + String(repeating: "0", count: DiskLruJournal.maxLineBytes - prefix.utf8.count - 1) + "5"
        #expect(longest.utf8.count == DiskLruJournal.maxLineBytes)
        func read(_ text: String) throws -> DiskLruJournal.Contents {
            let bytes = Array(text.utf8)
            var reader = DiskLruJournal.Reader(Self.glide)
            var start = 0
            while start < bytes.count {
                let end = min(start + piece, bytes.count)
                try bytes[start..<end].withUnsafeBytes { try reader.read($0) }
                start = end
            }
            return try reader.finish()
        }
        #expect(try read(Self.head1 + "READ x\n" + longest + "\n").entries["k"]?.lengths == [5])
        for tooLong in [Self.head1 + "READ x\n" + longest + "0\nREAD k\n", Self.head1 + "READ x\n" + longest + "0",
                        Self.head1 + "READ x\n" + String(repeating: "R", count: 3 << 20)] {
            #expect {
                _ = try read(tooLong)
            } throws: { error in
                guard let corrupt = error as? DiskLruJournal.Corrupt else { return false }
                return corrupt.line == 7 && corrupt.reason.hasPrefix("a line of more than 65536 bytes")
            }
        }
    }
}

