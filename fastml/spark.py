"""fastml estimators as ``pyspark.ml`` stages (``pip install 'fastml-classic[spark]'``).

``SparkEstimator(fastml.LogisticRegression(), inputCols=[...], labelCol="label")`` is a
``pyspark.ml`` Estimator: its ``fit(df)`` fits the fastml estimator where the DataFrame's rows
are (fastml/_spark.py: statistics per partition, objectives summed over partitions held in a
barrier stage, SGD passes mixed, forests grown per partition) and returns a ``SparkModel``,
a ``pyspark.ml`` Model whose ``transform(df)`` adds the prediction (and, where the estimator
has them, the probability and raw prediction vectors) lazily, through one pandas UDF. Both
work inside a ``pyspark.ml.Pipeline``; ``SparkModel.estimator`` is the fitted fastml
estimator itself, to save with ``fastml.save`` and use off Spark.

The features are ``inputCols`` (columns of numbers, or text / booleans as categories) or
``featuresCol`` (one ml vector column, MLlib's convention, e.g. a VectorAssembler's output).
See docs/user_guide/spark.rst.
"""
import copy

from ._extras import require

require("pyspark.ml", "spark", "fastml.spark")

from pyspark import keyword_only  # noqa: E402
from pyspark.ml import Estimator, Model  # noqa: E402
from pyspark.ml.param import Param, Params, TypeConverters  # noqa: E402
from pyspark.ml.param.shared import (HasFeaturesCol, HasInputCols, HasLabelCol,  # noqa: E402
                                     HasPredictionCol, HasProbabilityCol,
                                     HasRawPredictionCol, HasWeightCol)

from ._spark import fit as _fit_on_spark, with_outputs  # noqa: E402

__all__ = ["SparkEstimator", "SparkModel"]


class _Columns(HasFeaturesCol, HasInputCols, HasLabelCol, HasWeightCol, HasPredictionCol,
               HasProbabilityCol, HasRawPredictionCol):
    """The columns both stages read and write (MLlib's names and defaults); an output column
    set to "" is not written."""

    def __init__(self):
        super().__init__()
        self._setDefault(featuresCol="features", labelCol="label",
                         predictionCol="prediction", probabilityCol="probability",
                         rawPredictionCol="rawPrediction")

    def _features(self):
        """The feature columns: inputCols when set, else the vector column featuresCol."""
        if self.isSet(self.inputCols) and self.getInputCols():
            return list(self.getInputCols())
        return [self.getFeaturesCol()]

    def _weight(self):
        return self.getWeightCol() if self.isSet(self.weightCol) and self.getWeightCol() \
            else None


class SparkEstimator(Estimator, _Columns):
    """A fastml estimator as a ``pyspark.ml`` Estimator.

    Parameters
    ----------
    estimator : fastml estimator
        Fitted on each ``fit(df)`` (a copy: this one stays as it is).
    featuresCol : str, default "features"
        A vector column holding the features (used when inputCols is not set).
    inputCols : list of str, optional
        The feature columns.
    labelCol : str, default "label"
    weightCol : str, optional
        Sample weights.
    predictionCol, probabilityCol, rawPredictionCol : str
        The model's output columns ("prediction", "probability", "rawPrediction"); "" leaves
        one out. The probabilities (predict_proba) and raw predictions (decision_function)
        are ml vectors when there is one per class, numbers otherwise.

    Examples
    --------
    See docs/user_guide/spark.rst (a session is needed to run one).
    """
    estimator = Param(Params._dummy(), "estimator", "the fastml estimator to fit",
                      typeConverter=TypeConverters.identity)

    def __init__(self, estimator=None, *, featuresCol="features", inputCols=None,
                 labelCol="label", weightCol=None, predictionCol="prediction",
                 probabilityCol="probability", rawPredictionCol="rawPrediction"):
        super().__init__()
        self.setParams(estimator=estimator, featuresCol=featuresCol, inputCols=inputCols,
                       labelCol=labelCol, weightCol=weightCol, predictionCol=predictionCol,
                       probabilityCol=probabilityCol, rawPredictionCol=rawPredictionCol)

    @keyword_only
    def setParams(self, *, estimator=None, featuresCol=None, inputCols=None, labelCol=None,
                  weightCol=None, predictionCol=None, probabilityCol=None,
                  rawPredictionCol=None):
        """Set the parameters given (None: left as they are)."""
        return self._set(**{k: v for k, v in self._input_kwargs.items() if v is not None})

    def _fit(self, dataset):
        if not self.isSet(self.estimator):
            raise ValueError("SparkEstimator needs a fastml estimator: "
                             "SparkEstimator(fastml.LogisticRegression(), ...)")
        fastml_estimator = copy.deepcopy(self.getOrDefault(self.estimator))
        label, weight = self.getLabelCol(), self._weight()
        columns = self._features() + [label] + ([weight] if weight else [])
        missing = [c for c in columns if c not in dataset.columns]
        if missing:
            raise ValueError(f"the DataFrame has no column(s) {missing}; it has "
                             f"{dataset.columns}")
        _fit_on_spark(fastml_estimator, dataset.select(*columns), label, weight)
        return self._copyValues(SparkModel(fastml_estimator))


class SparkModel(Model, _Columns):
    """A fitted fastml estimator as a ``pyspark.ml`` Model: ``transform(df)`` adds its
    outputs as columns, lazily; ``estimator`` is the fitted fastml estimator."""

    def __init__(self, estimator=None):
        super().__init__()
        self.estimator = estimator

    def _transform(self, dataset):
        outputs = {}
        for column, method in ((self.getPredictionCol(), "predict"),
                               (self.getProbabilityCol(), "predict_proba"),
                               (self.getRawPredictionCol(), "decision_function")):
            if column and hasattr(self.estimator, method):
                outputs[column] = getattr(self.estimator, method)
        return with_outputs(dataset, self.estimator, outputs, features=self._features(),
                            vectors=True)

    def __repr__(self):
        return f"SparkModel({self.estimator!r})"
