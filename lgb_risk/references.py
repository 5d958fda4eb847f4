"""The bibliography: every paper the library's docstrings cite, by the key they cite it with.

[LM]   C. J. C. Burges. From RankNet to LambdaRank to LambdaMART: an overview. Microsoft Research
       Technical Report MSR-TR-2010-82, 2010. (LambdaMART's λ-gradients, as LightGBM's
       ``lambdarank`` computes them.)
[CRO]  L. Wang, P. N. Bennett, K. Collins-Thompson. Robust ranking models via risk-sensitive
       optimization. SIGIR 2012. (URisk's trade-off in training: U-CRO.)
[TR]   B. T. Dinçer, C. Macdonald, I. Ounis. Hypothesis testing for the risk-sensitive
       evaluation of retrieval systems. SIGIR 2014. (URisk, TRisk and its inference, TR_q/TJ_q;
       the T-SARO and T-FARO learners, §6.)
[GEO]  B. T. Dinçer, C. Macdonald, I. Ounis. Risk-sensitive evaluation and learning to rank
       using multiple baselines. SIGIR 2016. (T*Risk, ZRisk, GeoRisk; the T*-FARO and GeoRisk
       learners and the experimental protocol, §6.)
[AE]   C. Sawade, S. Bickel, T. von Oertzen, T. Scheffer, N. Landwehr. Active evaluation of
       ranking functions based on graded relevance. Machine Learning 92(1):41-64, 2013.
       (Active evaluation; ERR as its Eq. 2.)
[UE]   D. Feng, S. K. Karmaker Santu. Joint upper & expected value normalization for
       evaluation of retrieval systems: a case study with learning-to-rank methods. 2023.
       (Upper/expected normalisation, Eqs. 4-7: the ``*_ue1``/``*_ue2`` measures.)
[NDCG] R. Busa-Fekete, G. Szarvas, T. Élteto, B. Kégl. An apple-to-apple comparison of
       learning-to-rank algorithms in terms of normalized discounted cumulative gain. ECAI 2012
       workshop on preference learning. (Why tools that all print "NDCG@10" disagree:
       :mod:`lgb_risk.conventions`.)

``CITATION.cff`` at the root of the source distribution says which of these to cite for each
method, beside the library itself.
"""
