/// What a response was, beyond its body: kept by Download, stored by the
/// index layouts (`StoredResponse`), so in the layer both import.

/// One response header line, name as the server spelled it.
public struct HeaderField: Sendable, Equatable {
    public var name: String
    public var value: String
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// What a TLS connection was: the cipher suite by its IANA name, the
/// protocol ("TLSv1.2", "TLSv1.3"), the server's certificate chain (DER).
public struct TLSFacts: Sendable, Equatable {
    public var cipherSuite: String
    public var version: String
    public var peerCertificates: [[UInt8]]
    public init(cipherSuite: String, version: String, peerCertificates: [[UInt8]]) {
        self.cipherSuite = cipherSuite
        self.version = version
        self.peerCertificates = peerCertificates
    }
}
