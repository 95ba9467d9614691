"""The linear models' classification losses, each fused with its gradient (one pass, the
crate's deterministic blocked sums).

``logistic_loss_grad(z, y)``: binary log-loss of scores ``z`` against 0/1 targets ``y``;
returns ``(summed loss, sigmoid(z) - y, its sum)``.
``softmax_loss_grad(z, labels)``: cross-entropy of an ``(n, k)`` score matrix against class
indices; returns ``(summed loss, softmax(z) - onehot, its column sums)``.
"""

from rustyml import _native

logistic_loss_grad = _native.math.losses.logistic_loss_grad
softmax_loss_grad = _native.math.losses.softmax_loss_grad

__all__ = ["logistic_loss_grad", "softmax_loss_grad"]
