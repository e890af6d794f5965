#if canImport(Glibc)
import Glibc
#endif

/// A value of a `cacheObject` column as SQLite stores it: any column of
/// any row may hold any of these, whatever the schema says.
enum FlutterColumnValue: Equatable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// One `cacheObject` row imgwarm acts on, checked as data: the types
/// `CacheObject.fromMap` reads (`url`, `relativePath` text; `validTill`,
/// `touched` int; `eTag` text or null; `length` int or null) and stricter
/// (`key` non-null text, which the library lets fall back to the url;
/// `relativePath` one plain file name, never a path: it is unlinked).
struct FlutterCacheRow: Equatable, Sendable {
    var id: Int64
    var url: String
    var key: String
    var relativePath: String
    var touched: Int64
    var length: Int64?

    /// A row refused: its `_id` (when it has one) and why.
    struct Refused: Error, Equatable, CustomStringConvertible {
        let id: String
        let reason: String
        var description: String { "row _id \(id): \(reason)" }
    }

    /// The columns `_id, url, key, relativePath, touched, length, validTill, eTag` in this order.
    static let selectedColumns = "_id, url, key, relativePath, touched, length, validTill, eTag"

    /// The row from its eight values (`selectedColumns`), or `Refused`.
    static func validated(_ values: [FlutterColumnValue]) throws -> FlutterCacheRow {
        func describe(_ v: FlutterColumnValue) -> String {
            switch v {
            case .null: return "NULL"
            case .integer(let n): return String(n)
            case .real(let d): return String(d)
            case .text: return "text"
            case .blob: return "a blob"
            }
        }
        guard values.count == 8 else { throw Refused(id: "?", reason: "\(values.count) columns where 8 were selected") }
        guard case .integer(let id) = values[0] else { throw Refused(id: describe(values[0]), reason: "_id is not an integer") }
        func refused(_ reason: String) -> Refused { Refused(id: String(id), reason: reason) }
        func text(_ i: Int, _ column: String) throws -> String {
            guard case .text(let s) = values[i] else { throw refused("\(column) is \(describe(values[i])), not text") }
            return s
        }
        func integer(_ i: Int, _ column: String, nullable: Bool) throws -> Int64? {
            switch values[i] {
            case .integer(let n): return n
            case .null where nullable: return nil
            default: throw refused("\(column) is \(describe(values[i])), not an integer")
            }
        }
        let url = try text(1, "url")
        let key = try text(2, "key")
        let relativePath = try text(3, "relativePath")
        guard IndexNames.isPlainEntryName(relativePath) else {
            throw refused("relativePath is not one plain file name (no /, no NUL, not . or .., not hidden)")
        }
        guard let touched = try integer(4, "touched", nullable: false) else { throw refused("touched is NULL") }
        let length = try integer(5, "length", nullable: true)
        if let length, length < 0 { throw refused("length \(length) is negative") }
        _ = try integer(6, "validTill", nullable: false)
        if values[7] != .null { _ = try text(7, "eTag") }
        return FlutterCacheRow(id: id, url: url, key: key, relativePath: relativePath, touched: touched, length: length)
    }

    /// Removes the file `relativePath` names in the files folder through
    /// `remover`: every removal of a row's file goes through here. A name
    /// that is not one plain file name removes nothing (EINVAL).
    static func removeFile(_ relativePath: String, in folder: Int32, remover: any IndexFileRemover) -> Int32 {
        guard IndexNames.isPlainEntryName(relativePath) else { return EINVAL }
        return remover.unlink(relativePath, in: folder)
    }

    /// The sum of the rows' lengths, saturating (a length is checked non-negative).
    static func totalLength(_ rows: [FlutterCacheRow]) -> Int64 {
        rows.reduce(Int64(0)) { total, row in
            let (sum, overflow) = total.addingReportingOverflow(row.length ?? 0)
            return overflow ? .max : sum
        }
    }

    /// `CacheStore._cleanupCache` run until nothing is left: the rows
    /// beyond the `capacity` most recently touched among those touched
    /// more than a day before `now` (`getObjectsOverCapacity`), then those
    /// touched before `now - stale` (`getOldObjects`). `keep(key)`: pinned.
    /// In `_id` order, each with its reason. Times in milliseconds.
    static func doomed(_ rows: [FlutterCacheRow], now: Int64, staleMilliseconds: Int64, capacity: Int,
                       keep: (String) -> Bool) -> [(row: FlutterCacheRow, reason: PruneResult.Reason)] {
        var doomed: [Int64: (FlutterCacheRow, PruneResult.Reason)] = [:]
        let (dayAgo, o1) = now.subtractingReportingOverflow(86_400_000)
        let older = rows.filter { !o1 && $0.touched < dayAgo }.sorted { $0.touched > $1.touched }
        for row in older.dropFirst(max(0, capacity)) { doomed[row.id] = (row, .trimmed) }
        let (cutoff, o2) = now.subtractingReportingOverflow(staleMilliseconds)
        for row in rows where !o2 && row.touched < cutoff && doomed[row.id] == nil {
            doomed[row.id] = (row, .expired)
        }
        return doomed.sorted { $0.key < $1.key }.compactMap { keep($0.value.0.key) ? nil : ($0.value.0, $0.value.1) }
    }
}
