import ProcessTestSupport
import Testing

/// Every sample run as a real process against a real collector, one at a time: the nested
/// suites (in extensions) inherit `.serialized`, so no two samples or daemons run at once.
@Suite("Samples", .serialized, .offTheCooperativePool)
struct SamplesTests {}
