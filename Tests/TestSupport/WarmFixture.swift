import Foundation

/// A fresh temp directory (under NSTemporaryDirectory) for one test.
public func makeTempDirectory(_ name: String = "imgwarm-e2e") -> String {
    let path = NSTemporaryDirectory() + "\(name)-\(UUID().uuidString)"
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// A loopback server, a cache folder and helpers for one end-to-end test.
public final class WarmFixture {
    public let server: TestHTTPServer
    public let dir: String
    public var cache: String { dir + "/cache" }
    /// path on the server → bytes it serves.
    public var served: [String: [UInt8]] = [:]

    public init() throws {
        server = try TestHTTPServer.start()
        dir = makeTempDirectory()
    }

    deinit {
        server.shutdown()
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// Serves `count` distinct valid PNGs at /img/N.png and returns their URLs.
    public func servePNGs(_ count: Int, prefix: String = "/img", etag: Bool = false) -> [String] {
        (0..<count).map { i in
            let path = "\(prefix)/\(i).png"
            let bytes = TinyPNG.make(width: 4 + i % 13, height: 3 + i % 7, seed: i)
            server.setFile(path, bytes: bytes, contentType: "image/png", etag: etag ? "\"v\(i)\"" : nil)
            served[path] = bytes
            return server.url(path)
        }
    }

    public func writeManifest(_ lines: [String], name: String = "manifest.txt") -> String {
        let path = dir + "/" + name
        FileManager.default.createFile(atPath: path, contents: Data((lines.joined(separator: "\n") + "\n").utf8))
        return path
    }

    public func warm(_ args: [String], environment: [String: String] = [:]) throws -> BinaryRunner.Result {
        try BinaryRunner.run(["warm"] + args + ["--cache", cache, "--progress", "none"], environment: environment)
    }

    /// The cache path `imgwarm cache path` gives for a key.
    public func cachePath(_ key: String) throws -> String {
        try cachePaths([key])[0]
    }

    /// One `cache path` run for many keys (a process per key is slow).
    public func cachePaths(_ keys: [String]) throws -> [String] {
        try BinaryRunner.run(["cache", "path", "--cache", cache, "--"] + keys).stdout.split(separator: "\n").map(String.init)
    }

    public func report(_ path: String) throws -> (entries: [[String: Any]], totals: [String: Any]) {
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as! [String: Any]
        return (json["entries"] as! [[String: Any]], json["totals"] as! [String: Any])
    }

    /// Cache entries (hidden state excluded).
    public func cacheFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: cache)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
    }
}

