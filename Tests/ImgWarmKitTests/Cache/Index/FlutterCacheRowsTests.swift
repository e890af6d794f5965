import Testing
@testable import ImgWarmKit

/// A `cacheObject` row checked as data, by table: the types
/// Baseflow/flutter_cache_manager's
/// flutter_cache_manager/lib/src/storage/cache_object.dart `CacheObject.fromMap`
/// reads, a non-null key, and a relativePath that is one plain file name.
@Suite struct FlutterCacheRowsTests {
    static func row(id: FlutterColumnValue = .integer(7), url: FlutterColumnValue = .text("http://h/a.png"),
                    key: FlutterColumnValue = .text("http://h/a.png"), path: FlutterColumnValue = .text("0b1c.png"),
                    touched: FlutterColumnValue = .integer(5), length: FlutterColumnValue = .integer(10),
                    validTill: FlutterColumnValue = .integer(0), eTag: FlutterColumnValue = .null) -> [FlutterColumnValue] {
        [id, url, key, path, touched, length, validTill, eTag]
    }

    @Test(arguments: [
        (row(), nil),
        (row(length: .null), nil),
        (row(eTag: .text("\"v1\"")), nil),
        (row(id: .null), "row _id NULL: _id is not an integer"),
        (row(key: .null), "row _id 7: key is NULL, not text"),
        (row(url: .integer(3)), "row _id 7: url is 3, not text"),
        (row(path: .null), "row _id 7: relativePath is NULL, not text"),
        (row(path: .blob([0x61])), "row _id 7: relativePath is a blob, not text"),
        (row(path: .text("/etc/passwd")), "row _id 7: relativePath is not one plain file name"),
        (row(path: .text("../x.png")), "row _id 7: relativePath is not one plain file name"),
        (row(path: .text("..")), "row _id 7: relativePath is not one plain file name"),
        (row(path: .text(".")), "row _id 7: relativePath is not one plain file name"),
        (row(path: .text(".hidden")), "row _id 7: relativePath is not one plain file name"),
        (row(path: .text("a\u{0}b")), "row _id 7: relativePath is not one plain file name"),
        (row(path: .text("")), "row _id 7: relativePath is not one plain file name"),
        (row(touched: .null), "row _id 7: touched is NULL, not an integer"),
        (row(touched: .text("now")), "row _id 7: touched is text, not an integer"),
        (row(length: .integer(-1)), "row _id 7: length -1 is negative"),
        (row(length: .real(1.5)), "row _id 7: length is 1.5, not an integer"),
        (row(validTill: .null), "row _id 7: validTill is NULL, not an integer"),
        (row(eTag: .integer(1)), "row _id 7: eTag is 1, not text"),
    ] as [([FlutterColumnValue], String?)])
    func rowTable(values: [FlutterColumnValue], refusal: String?) {
        do {
            let row = try FlutterCacheRow.validated(values)
            #expect(refusal == nil, "accepted \(row)")
        } catch {
            #expect("\(error)".hasPrefix(refusal ?? "(accepted)"), "\(error)")
        }
    }

    /// `_cleanupCache`'s choice, with times at the ends of Int64: no trap.
    @Test func doomedRowsAtTheEndsOfTime() throws {
        let rows = try [0, 1, 2].map { i in
            try FlutterCacheRow.validated(Self.row(id: .integer(Int64(i)), key: .text("k\(i)"), path: .text("f\(i)"),
                                                   touched: .integer([Int64.min, 0, Int64.max][i])))
        }
        #expect(FlutterCacheRow.doomed(rows, now: Int64.min, staleMilliseconds: .max, capacity: 0, keep: { _ in false }).isEmpty)
        let all = FlutterCacheRow.doomed(rows, now: Int64.max, staleMilliseconds: 0, capacity: 0, keep: { _ in false })
        #expect(all.map(\.row.id) == [0, 1])
        #expect(FlutterCacheRow.doomed(rows, now: Int64.max, staleMilliseconds: 0, capacity: 5, keep: { $0 == "k0" }).map(\.row.id) == [1])
        #expect(FlutterCacheRow.totalLength(rows) == 30)
    }
}
