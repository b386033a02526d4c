;; Gripper, multi-robot typed STRIPS version (nextstate shipped domain).
;;
;; Robots with two grippers each (left, right) carry balls between rooms.
;; A gripper is free or carries exactly one ball.  Moving between any two
;; rooms takes one step.  Problems name the domain `gripper-strips`.
;; Types, predicates and actions follow the ACPBench reference order.

(define (domain gripper-strips)
  (:requirements :strips :typing)

  (:types ball gripper robot room - object)

  (:predicates
    (at ?o - ball ?x - room)                     ; ball ?o lies in room ?x
    (at-robby ?r - robot ?x - room)              ; robot ?r is in room ?x
    (carry ?r - robot ?o - ball ?g - gripper)    ; ?r holds ?o in gripper ?g
    (free ?r - robot ?g - gripper))              ; gripper ?g of ?r is empty

  ;; Release a carried ball in the robot's room.
  (:action drop
    :parameters (?r - robot ?obj - ball ?room - room ?g - gripper)
    :precondition (and (carry ?r ?obj ?g) (at-robby ?r ?room))
    :effect (and (at ?obj ?room) (free ?r ?g)
                 (not (carry ?r ?obj ?g))))

  ;; Go from one room to another.
  (:action move
    :parameters (?r - robot ?from - room ?to - room)
    :precondition (at-robby ?r ?from)
    :effect (and (at-robby ?r ?to) (not (at-robby ?r ?from))))

  ;; Grasp a ball lying in the robot's room with a free gripper.
  (:action pick
    :parameters (?r - robot ?obj - ball ?room - room ?g - gripper)
    :precondition (and (at ?obj ?room) (at-robby ?r ?room) (free ?r ?g))
    :effect (and (carry ?r ?obj ?g)
                 (not (at ?obj ?room)) (not (free ?r ?g))))
)
