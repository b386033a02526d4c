;; Visit-All (nextstate shipped domain).
;;
;; A robot walks over the cells of a grid (possibly with holes); every cell
;; it enters becomes visited.  Goals ask for cells to have been visited.
;; Problems name the domain `grid-visit-all`.

(define (domain grid-visit-all)
  (:requirements :typing)

  (:types place - object)

  (:predicates
    (at-robot ?x - place)               ; the robot stands on ?x
    (connected ?x - place ?y - place)   ; static: one step leads from ?x to ?y
    (visited ?x - place))               ; ?x has been entered (or is the start)

  (:action move
    :parameters (?curpos - place ?nextpos - place)
    :precondition (and (at-robot ?curpos) (connected ?curpos ?nextpos))
    :effect (and (at-robot ?nextpos) (visited ?nextpos)
                 (not (at-robot ?curpos))))
)
