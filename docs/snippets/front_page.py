import fastml
from fastml.datasets import load_auto_mpg
from fastml.model_selection import train_test_split

X, mpg = load_auto_mpg(return_X_y=True)                     # 392 cars, 6 numeric columns
X_train, X_test, y_train, y_test = train_test_split(X, mpg >= 23, random_state=0)
tree = fastml.DecisionTreeClassifier(max_depth=2).fit(X_train, y_train)  # information gain
print(fastml.export_text(tree, ["cylinders", "displacement", "horsepower", "weight",
                                "acceleration", "year"]))
scale = X_train.std(axis=0)
model = fastml.LogisticRegression().fit(X_train / scale, y_train)   # L-BFGS, L2 penalty
print(f"tree {tree.score(X_test, y_test):.3f}, logistic {model.score(X_test / scale, y_test):.3f}")
fastml.save(model, "model.fastml")                          # a model file that cannot run code
