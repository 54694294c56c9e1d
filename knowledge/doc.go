// Package knowledge is a small in-memory lexical index over a server's
// documents. Before a turn the server searches it with the person's
// message; the hits go to the model as reference material and to the
// client as the citations of eventual_response (PROTOCOL.md §7.4).
//
// A document's score is the number of distinct words it shares with the
// query. Search ranks every document by score, keeping the order the
// documents were given for equal scores, and returns the first k, so a
// non-empty index answers every query, with score 0 when nothing overlaps,
// as the reference servers do.
package knowledge
