"""lgb_risk.data, the readers: LETOR/SVMlight files (query ids, comments, query files, the
shared datasets) and TREC runs and qrels (the fast and the exact reader), and every refusal naming
the file and line."""

import gzip
import warnings

import numpy as np
import pytest

from lgb_risk import data
from lgb_risk.data import load_letor
from tests.conftest import shared_file


def _write(path, text):
    path.write_text(text)
    return path


# -- LETOR / SVMlight files ----------------------------------------------------------------------

@pytest.mark.parametrize("text, message", [
    ("1 qid:1 1:0.5\n0 1:0.1\n1 qid:2 1:1\n",
     r"d.txt:2: this document has no qid: field, the file's others do"),
    ("1 qid:1 1:0.5\n0 qid:1 1:inf\n", r"d.txt:2: feature 1 is infinite"),
    ("1 qid:1 1:0.5\n0 qid:1 1:x\n", r"d.txt:2: feature 1 must be a number, got 'x'"),
    ("1 qid:1 1:0.5\nbad qid:1 1:1\n", r"d.txt:2: the label must be a number, got 'bad'"),
    ("1 qid:1 2:0.5 1:1\n", r"d.txt:1: feature indices must increase along a line; 1 comes "
                            r"after 2"),
    ("1 qid:1 0:0.5\n", r"d.txt:1: feature index must be a whole number >= 1, got '0'"),
    ("1 qid:1 1:0.5\n2.5 qid:1 1:1\n", r"d.txt:2: label 2.5; expected a whole number >= 0"),
    ("", r"d.txt: no document in the file"),
    ("# only a comment\n\n", r"d.txt: no document in the file"),
    ("1 qid:1 1:1\n0 qid:2 1:1\n1 qid:1 1:0\n", r"d.txt:3: the documents of query 1 are not"),
])
def test_malformed_letor_files_name_the_line(tmp_path, text, message):
    with pytest.raises(ValueError, match=message):
        load_letor(_write(tmp_path / "d.txt", text))


def test_a_stray_feature_index_is_refused_unless_the_width_is_given(tmp_path):
    path = _write(tmp_path / "d.txt", "1 qid:1 1:0.5 2:1\n0 qid:1 1:0.1 50000000:1.0\n")
    with pytest.raises(ValueError, match=r"d.txt:2: feature index 50000000 exceeds n_features=2"):
        load_letor(path, n_features=2)
    with pytest.raises(ValueError, match=r"d.txt:2: feature index 50000000 is more than 10 "
                                         r"times any other in the file \(next: 2\).*pass "
                                         r"n_features=50000000"):
        load_letor(path)
    assert load_letor(path, n_features=50_000_000).X.shape == (2, 50_000_000)  # asked for
    normal = _write(tmp_path / "ok.txt", "1 qid:1 1:0.5 2000:1\n0 qid:1 1:0.1 1990:1\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_letor(normal).X.shape == (2, 2000)


def test_comment_only_lines_do_not_shift_document_ids(tmp_path):
    path = _write(tmp_path / "d.txt", "# exported 2026-11-22\n1 qid:1 1:0.5 # docid = a\n"
                                      "\n0 qid:1 1:0.1 # docid = b\n")
    loaded = load_letor(path)
    assert loaded.docids.tolist() == ["a", "b"] and loaded.y.tolist() == [1, 0]


def test_query_file_problems_name_the_line(tmp_path):
    path = _write(tmp_path / "d.txt", "1 1:0.5\n0 1:0.1\n")
    _write(tmp_path / "d.txt.query", "2\n0\n")
    with pytest.raises(ValueError, match=r"d.txt.query:2: expected one query size \(a whole "
                                         r"number >= 1\), got '0'"):
        load_letor(path)
    _write(tmp_path / "d.txt.query", "3\n")
    with pytest.raises(ValueError, match=r"query sizes add up to 3, the data file has 2"):
        load_letor(path)


def test_non_utf8_comment_names_the_line(tmp_path):
    path = tmp_path / "d.txt"
    path.write_bytes(b"1 qid:1 1:0.5 # docid = a\n0 qid:1 1:0.1 # docid = \xe9t\xe9\n")
    with pytest.raises(ValueError, match=r"d.txt:2: not UTF-8 text"):
        load_letor(path)


def test_gzip_file_given_as_run_names_the_file(tmp_path):
    path = tmp_path / "run.txt.gz"
    path.write_bytes(gzip.compress(b"1 Q0 d 1 1.0 r\n" * 50))
    with pytest.raises(ValueError, match=r"run.txt.gz:1: not UTF-8 text"):
        data.read_run_columns(path)


def test_load_letor_reads_qids_comments_and_refuses_non_contiguous(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text("2 qid:7 1:0.5 3:1.0 # docid = d1 inc = 1\n"
                    "0 qid:7 2:0.25 # docid = d2\n"
                    "1 qid:3 1:1 # docid = d3\n")
    data = load_letor(path)
    assert data.X.shape == (3, 3) and data.X[0, 2] == 1.0 and data.X[1, 1] == 0.25
    assert data.y.tolist() == [2, 0, 1] and data.group.tolist() == [2, 1]
    assert data.query_ids.tolist() == [7, 3] and data.docids.tolist() == ["d1", "d2", "d3"]
    path.write_text("1 qid:1 1:1\n0 qid:2 1:1\n1 qid:1 1:0\n")
    with pytest.raises(ValueError, match=r"train.txt:3: the documents of query 1 are not"):
        load_letor(path)
    path.write_text("1 1:1\n0 1:0\n")
    with pytest.raises(ValueError, match="no qid: fields and there is no train.txt.query"):
        load_letor(path)
    (tmp_path / "train.txt.query").write_text("2\n")
    assert load_letor(path).group.tolist() == [2]
    path.write_text("1.5 qid:1 1:1\n")
    with pytest.raises(ValueError, match="label 1.5; expected a whole number"):
        load_letor(path)


@pytest.mark.shared_data
@pytest.mark.slow
def test_load_letor_on_the_shared_files():
    mq = load_letor(shared_file("mq2008/Fold1/train.txt"))
    assert mq.X.shape[1] == 46 and mq.docids[0] == "GX008-86-4444840"
    mslr = load_letor(shared_file("mslr_sample/msn1.fold1.train.5k.txt"), n_features=136)
    assert mslr.X.shape == (5000, 136) and mslr.group.size == 43 and mslr.docids is None
    example = load_letor(shared_file("lightgbm_example/rank.train"))
    assert example.group.size == 201 and example.group.sum() == example.y.size


# -- TREC runs and qrels ------------------------------------------------------------------------

@pytest.mark.parametrize("text, message", [
    ("1 Q0 a 1 0.5 r\n1 Q0 b 2 0.4\n", r"myrun.txt:2: expected 6 fields"),
    ("1 Q0 a 1 0.5 r\n\n1 Q0 b 2 high r\n",
     r"myrun.txt:3: SCORE must be a finite number, got .high."),
    ("1 Q0 a x 0.5 r\n", r"myrun.txt:1: RANK must be an integer"),
    ("1 Q0 a 1 nan r\n", r"myrun.txt:1: SCORE must be a finite number"),
    ("1 Q0 a 1 0.5 r\n2 Q0 a 1 0.5 r\n1 Q0 a 2 0.4 r\n",
     r"myrun.txt:3: document 'a' appears again for topic '1' \(first at line 1\)"),
    ("2 Q0 a 1 0.5 r\n1 Q0 a 1 0.5 r\n1 Q0 b 2 0.4 r\n1 Q0 a 3 0.3 r\n",
     r"myrun.txt:4: document 'a' appears again for topic '1' \(first at line 2\)"),
    ("", "has no line"),
])
def test_malformed_run_names_file_and_line(tmp_path, text, message):
    path = _write(tmp_path / "myrun.txt", text)
    with pytest.raises(ValueError, match=message):
        data.read_run(path)


def test_a_document_may_appear_once_in_each_topic(tmp_path):
    text = "1 Q0 a 1 0.5 r\n1 Q0 b 2 0.4 r\n2 Q0 a 1 0.5 r\n1 Q0 c 3 0.3 r\n2 Q0 b 2 0.1 r\n"
    run = data.read_run_columns(_write(tmp_path / "r.txt", text))
    assert run.docno.tolist() == [b"a", b"b", b"a", b"c", b"b"]


@pytest.mark.parametrize("text, message", [
    ("1 0 a\n", r"q.txt:1: expected 4 fields"),
    ("1 0 a 1\n1 0 b x\n", r"q.txt:2: GRADE must be an integer"),
    ("1 0 a 1\n1 0 a 2\n", r"q.txt:2: document 'a' appears again"),
])
def test_malformed_qrels_names_file_and_line(tmp_path, text, message):
    with pytest.raises(ValueError, match=message):
        data.read_qrels(_write(tmp_path / "q.txt", text))


@pytest.mark.parametrize("long_docno, long_topic, fast", [
    ("d" * 47, "7", (16, 48)),  # fits the narrow fields
    ("d" * 48, "7", (64, 256)),  # fills the narrow field: may have been cut, read wider
    ("d" * 100, "7" * 16, (64, 256)),
    ("d" * 300, "7", None),  # too long for every width: the exact reader
    ("d" * 20, "7" * 64, None),
])
def test_fast_and_line_by_line_readers_agree(tmp_path, monkeypatch, long_docno, long_topic,
                                             fast):
    """numpy's C reader, at the narrowest field widths that hold every id whole, and the exact
    line-by-line reader give the same columns; ids too long for every width are read whole by
    the exact one."""
    text = (f"{long_topic} Q0 b 1 2.5 r\n{long_topic} Q0 a 2 2.5 r\n\n10 Q0 c 1 -1e-3 r\n"
            f"10 Q0 {long_docno} 2 -2 r\n")
    path = _write(tmp_path / "r.txt", text)
    widths_read = []
    loaded_table = data._loaded_table

    def recording(path, layout, topic_width, docno_width):
        widths_read.append((topic_width, docno_width))
        return loaded_table(path, layout, topic_width, docno_width)

    monkeypatch.setattr(data, "_loaded_table", recording)
    run = data.read_run_columns(path)
    topic, docno, values, numbers = data._exact_columns(path, data._RUN_LAYOUT,
                                                        data._RUN_NUMERIC, "run")
    assert run.topic.tolist() == topic and run.docno.tolist() == docno and numbers == [1, 2, 4, 5]
    np.testing.assert_array_equal(run.score, values["SCORE"])
    np.testing.assert_array_equal(run.rank, values["RANK"])
    assert run.docno[-1] == long_docno.encode() and run.topic[0] == long_topic.encode()
    table = data._fast_columns(path, data._RUN_LAYOUT)
    if fast is None:
        assert table is None and widths_read[-1] == data._ID_WIDTHS[-1]
    else:
        assert widths_read[-1] == fast and table["docno"].tolist() == docno


def test_not_utf8_run_names_file_and_line(tmp_path):
    path = tmp_path / "r.txt"
    path.write_bytes(b"7 Q0 a 1 2.5 r\n7 Q0 \xff\xfe 2 x r\n")
    with pytest.raises(ValueError, match=r"r.txt:2: not UTF-8 text"):
        data.read_run(path)


def test_query_ids_are_read_in_one_pass_and_checked_by_line(tmp_path):
    from lgb_risk.data import load_letor

    path = tmp_path / "q.txt"
    path.write_text("1 qid:10 1:0.5\n0 qid:10 1:0.2\n# a comment\n\n2 qid:3 1:0.9\n")
    data = load_letor(path)
    assert data.query_ids.tolist() == [10, 3] and data.group.tolist() == [2, 1]
    assert data.qid.tolist() == [10, 10, 3]
    path.write_text("1 qid:10 1:0.5\n0 qid:x7 1:0.2\n")
    with pytest.raises(ValueError, match=r"q\.txt:2: query id 'x7' is not a whole number"):
        load_letor(path)
    path.write_text("1 1:0.5\n0 qid:4 1:0.2\n")
    with pytest.raises(ValueError, match=r"q\.txt:1: this document has no qid: field"):
        load_letor(path)


@pytest.mark.parametrize("columns", [("topic", "docno"), ("qid", "docno")])
def test_every_frame_gets_the_same_checks_whatever_its_column_names(columns):
    """A frame in this library's own columns is checked as PyTerrier's is: a NaN or infinite
    score, a NaN or fractional grade, each refused naming topic and document."""
    import pandas as pd

    from lgb_risk import trec

    topic, docno = columns
    score, grade = ("score", "grade") if topic == "topic" else ("score", "label")
    good_qrels = pd.DataFrame({topic: ["1", "1"], docno: ["a", "b"], grade: [1, 0]})
    good_run = pd.DataFrame({topic: ["1", "1"], docno: ["a", "b"], score: [0.5, 0.1]})
    for value in (np.nan, np.inf):
        bad = good_run.assign(**{score: [0.5, value]})
        with pytest.raises(ValueError, match=r"score of topic '1', document 'b' is .*finite"):
            data.as_run(bad)
        with pytest.raises(ValueError, match="document 'b'"):
            trec.evaluate_run(good_qrels, bad, ["ndcg@10"])
    for value in (np.nan, 1.5):
        bad = good_qrels.assign(**{grade: [value, 0]})
        with pytest.raises(ValueError, match=r"grade of topic '1', document 'a' is .*whole"):
            data.as_qrels(bad)
        with pytest.raises(ValueError, match="document 'a'"):
            trec.evaluate_run(bad, good_run, ["ndcg@10"])
    whole = good_qrels.assign(**{grade: [1.0, 0.0]})
    assert data.as_qrels(whole)["grade"].tolist() == [1, 0]
    if topic == "topic":
        assert data.as_run(good_run) is good_run  # nothing to convert: the frame itself
