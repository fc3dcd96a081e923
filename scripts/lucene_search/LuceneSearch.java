import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.SortedDocValuesField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.BoostQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.Sort;
import org.apache.lucene.search.SortField;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.util.BytesRef;

/**
 * The reference scripts/compare_webshop_lucene.py checks expbank's WebShop search against: Lucene 8's
 * EnglishAnalyzer (the chain of pyserini's default analyzer) and BM25 (k1 0.9, b 0.4), queried the way
 * pyserini's SimpleSearcher queries (one SHOULD clause per distinct term, boosted by its count; hits sorted
 * by score, then by id). All text travels as base64 of UTF-8, one item per line.
 *
 *   java LuceneSearch analyze < texts           one line of tab-separated tokens per text
 *   java LuceneSearch search DOCS QUERIES K     DOCS: "id<TAB>text" lines; one line per query of
 *                                               "id:scorebits" hits (score as Float.floatToIntBits hex)
 */
public class LuceneSearch {
  private static final Analyzer ANALYZER = new EnglishAnalyzer();
  private static final String FIELD = "contents";
  private static final String ID = "id";

  private static String decode(String line) {
    return new String(Base64.getDecoder().decode(line), StandardCharsets.UTF_8);
  }

  private static List<String> analyze(String text) throws IOException {
    List<String> tokens = new ArrayList<>();
    try (TokenStream stream = ANALYZER.tokenStream(FIELD, text)) {
      CharTermAttribute term = stream.addAttribute(CharTermAttribute.class);
      stream.reset();
      while (stream.incrementToken()) {
        tokens.add(term.toString());
      }
      stream.end();
    }
    return tokens;
  }

  private static IndexSearcher index(List<String> docLines, BM25Similarity bm25) throws IOException {
    ByteBuffersDirectory directory = new ByteBuffersDirectory();
    try (IndexWriter writer = new IndexWriter(directory, new IndexWriterConfig(ANALYZER).setSimilarity(bm25))) {
      for (String line : docLines) {
        String[] parts = line.split("\t", 2);
        Document doc = new Document();
        doc.add(new StringField(ID, parts[0], Field.Store.YES));
        doc.add(new SortedDocValuesField(ID, new BytesRef(parts[0])));
        doc.add(new TextField(FIELD, decode(parts[1]), Field.Store.NO));
        writer.addDocument(doc);
      }
    }
    IndexSearcher searcher = new IndexSearcher(DirectoryReader.open(directory));
    searcher.setSimilarity(bm25);
    return searcher;
  }

  public static void main(String[] args) throws IOException {
    PrintWriter out = new PrintWriter(System.out, false, StandardCharsets.UTF_8);
    if (args[0].equals("analyze")) {
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        out.println(String.join("\t", analyze(decode(line))));
      }
    } else {
      BM25Similarity bm25 = new BM25Similarity(0.9f, 0.4f);
      IndexSearcher searcher = index(Files.readAllLines(Paths.get(args[1])), bm25);
      Sort byScoreThenId = new Sort(SortField.FIELD_SCORE, new SortField(ID, SortField.Type.STRING_VAL));
      int k = Integer.parseInt(args[3]);
      for (String line : Files.readAllLines(Paths.get(args[2]))) {
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (String token : analyze(decode(line))) {
          counts.merge(token, 1, Integer::sum);
        }
        BooleanQuery.Builder query = new BooleanQuery.Builder();
        counts.forEach((term, count) -> query.add(
            new BoostQuery(new TermQuery(new Term(FIELD, term)), (float) count), BooleanClause.Occur.SHOULD));
        TopDocs hits = searcher.search(query.build(), k, byScoreThenId, true);
        List<String> row = new ArrayList<>();
        for (ScoreDoc hit : hits.scoreDocs) {
          row.add(searcher.doc(hit.doc).get(ID) + ":" + Integer.toHexString(Float.floatToIntBits(hit.score)));
        }
        out.println(String.join(" ", row));
      }
    }
    out.flush();
  }
}
