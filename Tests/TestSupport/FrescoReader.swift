import Foundation
import Testing

/// `Tests/AndroidReader/FrescoRead.java`: a clean-room reader of Fresco's
/// `image_cache` folder (paths, resource ids and shards by Java's own
/// String.hashCode, SHA-1 and Base64; eviction order by mtime).
public struct FrescoReader: Sendable {
    public struct Reading: Sendable {
        /// URL -> (relative path, length or -1, SHA-256).
        public var entries: [String: (path: String, length: Int, sha256: String)]
        /// Every `.cnt` file, in DiskStorageCache's eviction order.
        public var order: [String]
        public var output: String
    }

    let java: String
    let classes: String

    public static var shared: FrescoReader? { compiled.value }

    public static func needed(sourceLocation: SourceLocation = #_sourceLocation) throws -> FrescoReader {
        if let reader = shared { return reader }
        try prerequisiteMissing("javac/java not found: the clean-room Fresco reader did not run", sourceLocation: sourceLocation)
    }

    static let compiled = Lazy<FrescoReader?> {
        guard let javac = findTool("javac"), let java = findTool("java") else { return nil }
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("AndroidReader/FrescoRead.java").path
        let out = makeTempDirectory("imgwarm-fresco-reader")
        guard let result = runTool(javac, ["-d", out, source]), result.status == 0 else { return nil }
        return FrescoReader(java: java, classes: out)
    }

    public func read(_ directory: String, decimalShards: Bool = false, urls: [String]) throws -> Reading {
        guard let result = runTool(java, ["-cp", classes, "FrescoRead", directory, decimalShards ? "decimal" : "integer"] + urls),
              result.status == 0 else {
            throw TestServerError(description: "java FrescoRead did not run")
        }
        var reading = Reading(entries: [:], order: [], output: result.output)
        for line in result.output.split(separator: "\n") {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            if f.count == 2 && f[0] == "ORDER" { reading.order.append(f[1]) } else if f.count == 4 {
                reading.entries[f[0]] = (f[1], Int(f[2]) ?? -1, f[3])
            }
        }
        return reading
    }
}
