"""The lecture decks fastml implements, by number: where "004 slide 12" points.

Docstrings and tests cite the decks as "<number> slide <n>" (or "<number>, <topic>"). The
number is the deck's; its title, course and what fastml takes from it are below. The deck
texts live with the project's specification as ``<number>_<id>.txt`` (the `source` field).

======  =========================================================  ===============================
deck    title (course, author, date)                               fastml takes from it
======  =========================================================  ===============================
000     Stochastic Gradient Descent; Decision Trees (CSE446         logistic regression by
        Machine Learning, Carlos Guestrin, University of           gradient ascent, SGD, eta_t;
        Washington, April 19, 2013)                                ID3, information gain, the MPG
                                                                   example, chi-square pruning
                                                                   (MaxPchance), IG* thresholds
001     Introducción al aprendizaje automático, #3: Funciones de    polynomial regression, GD/SGD/
        costo y optimización. Árboles de decisión (Spanish)        Newton, step-size schedules,
                                                                   losses, ridge; the X1/X2/Y
                                                                   tree table, random forests
002     Logistic regression v. Naïve Bayes; Decision Trees          multiclass logistic regression
        (Carlos Guestrin, 2005-2007)                               (class R as reference), MAP =
                                                                   L2; decision trees as in 000
003     Case Study 1: Estimating Click Probabilities. Perceptron    online learning, perceptron,
        Algorithm, Kernels (continued) (CSE599C1/STAT592,          kernels, kernel perceptron,
        Carlos Guestrin, University of Washington, Jan. 15, 2013)  voted perceptron, hinge loss
004     Naïve Bayes; Linear Regression; Logistic Regression         naive Bayes (the tax table),
        (CSCI 4380/6380 Data Mining, Fei Dou, University of        Laplace / m-estimates, the
        Georgia, October 2023)                                     normal equation, cross-entropy,
                                                                   the one-step SGD example
======  =========================================================  ===============================

Examples
--------
>>> from fastml.lectures import LECTURES
>>> LECTURES["004"].title
'Naïve Bayes; Linear Regression; Logistic Regression'
>>> LECTURES["000"].source
'000_05859ed0a4f29eda.txt'
"""
from collections import namedtuple

__all__ = ["Lecture", "LECTURES"]

Lecture = namedtuple("Lecture", "title course source topics")
Lecture.__doc__ = """One lecture deck: its title, course (with author and date), the file name
of its text, and what fastml implements from it."""

LECTURES = {
    "000": Lecture("Stochastic Gradient Descent; Decision Trees",
                   "CSE446 Machine Learning, Carlos Guestrin, University of Washington, "
                   "April 19, 2013", "000_05859ed0a4f29eda.txt",
                   "logistic regression by gradient ascent, SGD, step sizes alpha/t; ID3, "
                   "information gain, the MPG example, chi-square pruning, IG* thresholds"),
    "001": Lecture("Introducción al aprendizaje automático, #3: Funciones de costo y "
                   "optimización. Árboles de decisión",
                   "an introduction to machine learning (Spanish)", "001_b93c3eb69b56bceb.txt",
                   "polynomial regression, GD/SGD/Newton, learning-rate schedules, losses, "
                   "ridge; the X1/X2/Y decision-tree table, min samples per leaf, forests"),
    "002": Lecture("Logistic regression v. Naïve Bayes; Decision Trees",
                   "Carlos Guestrin, 2005-2007", "002_bdd98e42092e5c7a.txt",
                   "Gaussian naive Bayes vs logistic regression, multiclass logistic "
                   "regression, MAP with a Gaussian prior = L2; decision trees"),
    "003": Lecture("Case Study 1: Estimating Click Probabilities. Perceptron Algorithm, "
                   "Kernels (continued)",
                   "CSE599C1/STAT592, Carlos Guestrin, University of Washington, "
                   "January 15, 2013", "003_95b48f9ae0abdaa8.txt",
                   "online learning, perceptron, kernels, kernel perceptron, voted perceptron, "
                   "hinge loss, SGD for logistic regression"),
    "004": Lecture("Naïve Bayes; Linear Regression; Logistic Regression",
                   "CSCI 4380/6380 Data Mining, Fei Dou, University of Georgia, October 2023",
                   "004_d5a164cd0072b90c.txt",
                   "naive Bayes with categorical and continuous attributes (the tax table), "
                   "Laplace and m-estimates, the normal equation, logistic regression by MLE, "
                   "cross-entropy, the one-step SGD example, mini-batches"),
}
