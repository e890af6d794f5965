@testable import ImgWarmSupport
@testable import ImgWarmCache
#if canImport(Glibc)
import Glibc
#endif

// libFuzzer entry point for the index readers: DiskLruCache journals
// (`DiskLruJournal.parse`) and flutter `cacheObject` rows
// (`FlutterCacheRow.validated`), and the removals the index layouts make
// from what they read (`removeValueFiles` of dead edits and of evicted
// entries; `FlutterCacheRow.removeFile` of pruned rows), built against
// ImgWarmCache (Sources/ImgWarmCache/Index) with testing enabled
// (scripts/fuzz.sh).
// Every removal reaches the remover below, which removes nothing and
// checks the name instead.

/// Fails the run (libFuzzer reports it as a crash with the input saved).
func invariant(_ ok: Bool, _ what: @autoclosure () -> String) {
    if !ok { fatalError("invariant broken: \(what())") }
}

/// What `rule` says every name reaching an unlink or a rename must pass,
/// besides being one plain file name of the folder.
struct CheckingRemover: IndexFileRemover {
    let rule: @Sendable (String) -> Bool
    func unlink(_ name: String, in folder: Int32) -> Int32 {
        check(name)
        return 0
    }
    func rename(_ name: String, in from: Int32, to newName: String, in to: Int32) -> Int32 {
        check(name)
        check(newName)
        return 0
    }
    func check(_ name: String) {
        invariant(IndexNames.isPlainFileName(name), "a name that is no plain file name reached the remover: \(name.debugDescription)")
        invariant(!name.utf8.contains(0) && !name.utf8.contains(0x2F) && name != "." && name != "..", "a path reached the remover: \(name.debugDescription)")
        invariant(rule(name), "a name failing the index's rule reached the remover: \(name.debugDescription)")
    }
}

/// `<key>.<n>` or `<key>.<n>.tmp` with a key of the key rule.
@Sendable func isValueFileName(_ name: String) -> Bool {
    var base = Substring(name)
    if base.hasSuffix(".tmp") { base = base.dropLast(4) }
    guard let dot = base.lastIndex(of: "."), let n = Int(base[base.index(after: dot)...]), n >= 0 else { return false }
    return DiskLruJournal.isValidKey(base[..<dot])
}

func fuzzJournal(_ bytes: ArraySlice<UInt8>, selector: UInt8) {
    let journal = selector & 2 == 0 ? DiskLruJournal(appVersion: 1, valueCount: 1) : DiskLruJournal(appVersion: 3, valueCount: 2)
    // Half the inputs get a valid header, so that mutations land in lines.
    var text = [UInt8]()
    if selector & 4 == 0 { text = Array(journal.header.utf8) }
    text += bytes
    // Read in pieces, as the index reads the file (64 KiB at a time): the
    // same journal, or the same refusal, wherever the pieces end.
    let piece = Int(selector >> 3) + 1
    let whole = Result { try journal.parse(text) }
    let inPieces = Result { () throws -> DiskLruJournal.Contents in
        var reader = DiskLruJournal.Reader(journal)
        var start = 0
        while start < text.count {
            let end = min(start + piece, text.count)
            try text[start..<end].withUnsafeBytes { try reader.read($0) }
            start = end
        }
        return try reader.finish()
    }
    switch (whole, inPieces) {
    case (.success(let a), .success(let b)): invariant(a == b, "read in pieces of \(piece) bytes, another journal")
    case (.failure(let a), .failure(let b)):
        invariant((a as? DiskLruJournal.Corrupt) == (b as? DiskLruJournal.Corrupt), "read in pieces of \(piece) bytes: \(b), whole: \(a)")
    default: invariant(false, "read in pieces of \(piece) bytes and whole disagree")
    }
    let contents: DiskLruJournal.Contents
    do { contents = try journal.parse(text) } catch let corrupt as DiskLruJournal.Corrupt {
        invariant(corrupt.line >= 1 && corrupt.line <= text.count + 1, "line \(corrupt.line) of \(text.count) bytes")
        return
    } catch {
        invariant(false, "an error other than Corrupt: \(error)")
        return
    }
    for key in contents.entries.keys { invariant(DiskLruJournal.isValidKey(key), "accepted key \(key.debugDescription)") }
    for (_, entry) in contents.entries {
        invariant(entry.lengths.count == journal.valueCount, "an entry with \(entry.lengths.count) lengths")
        invariant(entry.lengths.allSatisfy { $0 >= 0 }, "a negative length")
    }
    let size = contents.size
    invariant(size >= 0, "negative size")
    let remover = CheckingRemover(rule: isValueFileName)
    // What the index's open (rebuild) and prune remove.
    for key in DiskLruJournal.deadEdits(contents) {
        _ = journal.removeValueFiles(of: key, in: -1, temps: true, remover: remover)
    }
    let limit = Int64(selector >> 3) * 100
    var removed: Int64 = 0
    for (key, bytes) in DiskLruJournal.evictions(contents, limit: limit, keep: { $0.utf8.count % 7 == 3 }) {
        _ = journal.removeValueFiles(of: key, in: -1, remover: remover)
        removed += bytes
    }
    invariant(removed <= size, "evicted \(removed) of \(size) bytes")
    _ = journal.rebuilt(contents)
}

/// Rows from bytes: per column a type byte (null, integer, real, text,
/// blob) and its value (8 bytes; or a length byte and that many bytes).
func decodeRows(_ bytes: ArraySlice<UInt8>) -> [[FlutterColumnValue]] {
    var rows: [[FlutterColumnValue]] = []
    var i = bytes.startIndex
    func take(_ n: Int) -> ArraySlice<UInt8>? {
        guard bytes.endIndex - i >= n else { return nil }
        defer { i += n }
        return bytes[i..<(i + n)]
    }
    func int64(_ b: ArraySlice<UInt8>) -> Int64 { b.reduce(Int64(0)) { ($0 << 8) | Int64($1) } }
    outer: while i < bytes.endIndex && rows.count < 64 {
        var row: [FlutterColumnValue] = []
        for _ in 0..<8 {
            guard let type = take(1)?.first else { break outer }
            switch type % 5 {
            case 0: row.append(.null)
            case 1: guard let b = take(8) else { break outer }; row.append(.integer(int64(b)))
            case 2: guard let b = take(8) else { break outer }; row.append(.real(Double(bitPattern: UInt64(bitPattern: int64(b)))))
            case 3:
                guard let n = take(1)?.first, let b = take(Int(n % 64)) else { break outer }
                row.append(.text(String(decoding: b, as: UTF8.self)))
            default:
                guard let n = take(1)?.first, let b = take(Int(n % 64)) else { break outer }
                row.append(.blob(Array(b)))
            }
        }
        rows.append(row)
    }
    return rows
}

func fuzzRows(_ bytes: ArraySlice<UInt8>, selector: UInt8) {
    var rows: [FlutterCacheRow] = []
    for values in decodeRows(bytes) {
        // The index refuses the whole database at the first bad row.
        guard let row = try? FlutterCacheRow.validated(values) else { return }
        invariant(IndexNames.isPlainEntryName(row.relativePath), "accepted relativePath \(row.relativePath.debugDescription)")
        rows.append(row)
    }
    let remover = CheckingRemover(rule: { IndexNames.isPlainEntryName($0) })
    let now = rows.first?.touched ?? 0
    let stale = Int64(selector >> 3) * 86_400_000 * (selector & 2 == 0 ? 1 : Int64.max / 86_400_000 / 32)
    for (row, _) in FlutterCacheRow.doomed(rows, now: now, staleMilliseconds: stale, capacity: Int(selector % 7), keep: { $0.hasPrefix("k") }) {
        _ = FlutterCacheRow.removeFile(row.relativePath, in: -1, remover: remover)
    }
    // A name straight from the input (as a listing's orphan would be): the
    // remover never sees one that is not plain.
    if let path = rows.last?.url { _ = FlutterCacheRow.removeFile(path, in: -1, remover: remover) }
    _ = FlutterCacheRow.totalLength(rows)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func indexFuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let bytes = [UInt8](UnsafeBufferPointer(start: data, count: count))
    let selector = bytes[0]
    if selector & 1 == 0 { fuzzJournal(bytes[1...], selector: selector) } else { fuzzRows(bytes[1...], selector: selector) }
    return 0
}
