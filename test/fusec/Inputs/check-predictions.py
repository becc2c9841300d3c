"""Compares fusec predict's outputs with the data, fusec evaluate and train.

usage: check-predictions.py PREFIX LABELS EVAL_JSON TRAIN_JSON PREDICT_JSON
                            [C_PROBABILITIES C_LABELS]

PREFIX is predict's --npy-out (PREFIXprobabilities.npy, PREFIXlogits.npy,
PREFIXlabels.npy), LABELS the test split's IDX labels file (plain or .gz).
C_PROBABILITIES is raw little-endian f32 rows written by a C program linked
with `fusec export`'s object, C_LABELS its predicted labels, one a line.
Prints `check: True/False` lines for FileCheck.
"""

import gzip
import json
import math
import struct
import sys


def read_npy(path):
    """(dtype, shape, values) of a little-endian .npy of f4 or i8."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", path
    header_len = struct.unpack("<H", data[8:10])[0]
    header = eval(data[10:10 + header_len].decode())
    payload = data[10 + header_len:]
    code = {"<f4": "f", "<i8": "q"}[header["descr"]]
    count = len(payload) // struct.calcsize(code)
    return header["shape"], payload, struct.unpack(f"<{count}{code}", payload)


def read_idx_labels(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    (count,) = struct.unpack(">I", data[4:8])
    return list(data[8:8 + count])


def check(name, ok):
    print(f"{name}: {bool(ok)}")


def main():
    if len(sys.argv) not in (6, 8):
        sys.exit(__doc__)
    prefix, labels_path, eval_path, train_path, predict_path = sys.argv[1:6]
    shape, prob_bytes, probs = read_npy(prefix + "probabilities.npy")
    _, _, logits = read_npy(prefix + "logits.npy")
    _, _, predicted = read_npy(prefix + "labels.npy")
    truth = read_idx_labels(labels_path)
    rows, classes = shape
    with open(eval_path) as f:
        evaluation = json.load(f)
    with open(train_path) as f:
        train = json.load(f)
    with open(predict_path) as f:
        prediction = json.load(f)
    print(f"rows {rows} classes {classes} examples {len(truth)}")
    row = lambda values, r: values[r * classes:(r + 1) * classes]
    check("each row's probabilities sum to 1",
          all(abs(sum(row(probs, r)) - 1) < 1e-5 for r in range(rows)))
    check("each label is the first largest logit",
          all(predicted[r] == max(range(classes),
                                  key=lambda c: (row(logits, r)[c], -c))
              for r in range(rows)))
    check("each label is the largest probability's",
          all(row(probs, r)[predicted[r]] == max(row(probs, r))
              for r in range(rows)))
    # JSON numbers carry 17 digits: each f32 exactly.
    json_probs = [p for r in prediction["probabilities"] for p in r]
    check("the JSON's probabilities are the .npy's, bitwise",
          struct.pack(f"<{len(json_probs)}f", *json_probs) == prob_bytes)
    check("the JSON's labels are the .npy's",
          prediction["labels"] == list(predicted))
    correct = sum(p == t for p, t in zip(predicted, truth))
    print(f"correct {correct} of {rows}")
    check("predict's accuracy is evaluate's",
          correct / rows == evaluation["accuracy"])
    check("evaluate's accuracy and loss are train's last",
          evaluation["accuracy"] == train["test_accuracy"]
          and evaluation["loss"] == train["test_loss"])
    confusion = evaluation["confusion_matrix"]
    check("the confusion matrix counts predict's labels",
          all(confusion[t][p] == sum(1 for pp, tt in zip(predicted, truth)
                                     if (tt, pp) == (t, p))
              for t in range(classes) for p in range(classes)))
    recall_ok = all(
        (evaluation["recall"][c] is None) == (sum(confusion[c]) == 0) and
        (evaluation["recall"][c] is None or
         evaluation["recall"][c] == confusion[c][c] / sum(confusion[c]))
        for c in range(classes))
    check("each recall is its row's diagonal share", recall_ok)
    column = lambda c: sum(confusion[t][c] for t in range(classes))
    precision_ok = all(
        (evaluation["precision"][c] is None) == (column(c) == 0) and
        (evaluation["precision"][c] is None or
         evaluation["precision"][c] == confusion[c][c] / column(c))
        for c in range(classes))
    check("each precision is its column's diagonal share", precision_ok)
    top = sum(sum(l > row(logits, r)[truth[r]] for l in row(logits, r)) <
              evaluation["top_k"] for r in range(rows))
    check("the top-k accuracy counts labels fewer than k logits exceed",
          top / rows == evaluation["top_k_accuracy"])
    if len(sys.argv) == 8:
        with open(sys.argv[6], "rb") as f:
            c_probs = f.read()
        with open(sys.argv[7]) as f:
            c_labels = [int(line) for line in f]
        check("the C program's probabilities are predict's, bitwise",
              c_probs == prob_bytes)
        check("the C program's labels are predict's",
              c_labels == list(predicted))


main()
