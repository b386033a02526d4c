;; Sokoban (nextstate shipped domain; the IPC 2023 Learning Track's version:
;; unit costs, the four directions as constants).
;;
;; A robot walks between adjacent free cells and pushes a box one cell on
;; in the direction it walks, into a clear cell.  (clear ?l): no box on ?l
;; (the robot's own cell is clear).  Problems name the domain `sokoban`.

(define (domain sokoban)
  (:requirements :typing)

  (:types location direction box)

  (:constants down up left right - direction)

  (:predicates
    (at-robot ?l - location)
    (at ?o - box ?l - location)
    (adjacent ?l1 - location ?l2 - location ?d - direction)  ; static: ?l2 is ?d of ?l1
    (clear ?l - location))

  ;; Step to an adjacent clear cell.
  (:action move
    :parameters (?from - location ?to - location ?dir - direction)
    :precondition (and (clear ?to) (at-robot ?from) (adjacent ?from ?to ?dir))
    :effect (and (at-robot ?to) (not (at-robot ?from))))

  ;; Push the box in front one cell on, stepping into its cell.
  (:action push
    :parameters (?rloc - location ?bloc - location ?floc - location ?dir - direction ?b - box)
    :precondition (and (at-robot ?rloc) (at ?b ?bloc) (clear ?floc)
                       (adjacent ?rloc ?bloc ?dir) (adjacent ?bloc ?floc ?dir))
    :effect (and (at-robot ?bloc) (at ?b ?floc) (clear ?bloc)
                 (not (at-robot ?rloc)) (not (at ?b ?bloc)) (not (clear ?floc)))))
